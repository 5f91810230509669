# FFI from other languages (issue 35): examples/ffi/<language>/ in Go (cgo), Zig (translate-c),
# JavaScript (Node + koffi), Java (FFM, JDK 22+; JNA) and C# (Mono) run against the sdk/ that
# scripts/build lays out, and each one's output must equal the C reference's
# (examples/ffi/c/steps.c), after normalising number and boolean formatting only (`5.0` -> `5`,
# `True` -> `true`). Lines marked `[figure]` (the two-call last-error path under threads) are
# printed, not compared. The koffi, FFM, JNA and C# bindings are generated from the SDK's manifest
# (share/dlpack_helpers/abi.toml) by examples/ffi/bindgen.py; each generated layout must give
# the struct sizes and field offsets of the compiled header (a C program generated from the same
# manifest prints them), and a mutated manifest must make that comparison fail.
# Toolchains come from the registries into project folders where possible (.cache/ffi: Zig from
# PyPI `ziglang` in a venv, koffi from npm); Debian `golang-go`, `mono-mcs`, `mono-runtime` and
# `libjna-java` are installed with apt-get when missing and running as root (CI). A language whose
# toolchain cannot be had is skipped with the reason printed (DLPACK_HELPERS_FFI_STRICT=1: a skip
# fails).
# needs: release
source "$(dirname "$0")/../common.sh"
need cc "a C compiler"
need pkg-config "pkgconf"
"$ROOT/scripts/build" --from "$LIBDIR" >"$ROOT/target/ffi-build.log" 2>&1 \
  || { cat "$ROOT/target/ffi-build.log"; exit 1; }
SDK="$ROOT/sdk"
MANIFEST="$SDK/share/dlpack_helpers/abi.toml"
[ -f "$MANIFEST" ] || MANIFEST="$ROOT/spec/abi.toml"
CACHE="$ROOT/.cache/ffi"
WORK="$ROOT/target/ffi"
rm -rf "$WORK"; mkdir -p "$WORK" "$CACHE"
export PKG_CONFIG_PATH="$SDK/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export LD_LIBRARY_PATH="$SDK/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"  # loaders that take the SONAME
EX="$ROOT/examples/ffi"
BINDGEN=(python3 "$EX/bindgen.py")
fail() { echo "FAIL: $*" >&2; exit 1; }
passed=(); skipped=()
skip() {
  echo "SKIP $1: $2"
  skipped+=("$1 ($2)")
  [ "${DLPACK_HELPERS_FFI_STRICT:-0}" = 1 ] && fail "$1 skipped and DLPACK_HELPERS_FFI_STRICT=1"
  return 0
}
timed() { local t0=$SECONDS; "$@"; local rc=$?; echo "   ($(( SECONDS - t0 )) s: $*)" >&2; return $rc; }

# apt_get PACKAGE...: install Debian packages, quietly, only as root (CI runs as root on a copy
# of this machine). Returns non-zero when that is not possible.
apt_get() {
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 || return 1
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >"$WORK/apt.log" 2>&1 && return 0
  DEBIAN_FRONTEND=noninteractive apt-get update -q >>"$WORK/apt.log" 2>&1 || true
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >>"$WORK/apt.log" 2>&1
}

# Only number and boolean formatting differs between languages; [figure] lines are not compared.
normalise() { grep -v '^\[figure\]' "$1" | sed -E 's/\bTrue\b/true/g; s/\bFalse\b/false/g; s/(^|[^.0-9])([0-9]+)\.0\b/\1\2/g'; }

# compare LANGUAGE OUTPUT: the language's output against the C reference's.
compare() {
  grep '^\[figure\]' "$2" | sed "s/^/   $1: /" || true
  if ! diff -u <(normalise "$WORK/c.out") <(normalise "$2") >"$WORK/$1.diff"; then
    cat "$WORK/$1.diff"; fail "$1: the output differs from the C reference's"
  fi
  echo "ok: $1: the same output as C ($(wc -l <"$2") lines)"
  passed+=("$1")
}

# layout_check LANGUAGE FACTS_FILE: a generated layout against the compiled header's.
layout_check() {
  diff -u "$WORK/layout.c.txt" "$2" >"$WORK/$1.layout.diff" \
    || { cat "$WORK/$1.layout.diff"; fail "$1: the layout generated from the manifest differs from the header's"; }
  echo "ok: $1: the generated layout gives the header's $(wc -l <"$2") struct sizes and field offsets"
}

# A manifest with one fact wrong (dlpack_helpers_info.spec_version at 56, its type uint64_t):
# the generated layouts must then disagree with the header (the check can fail).
python3 - "$MANIFEST" "$WORK/abi.mutated.toml" <<'EOF'
import sys
s = open(sys.argv[1]).read()
old = '{ name = "spec_version", type = "uint32_t", offset = 52, size = 4 }'
assert old in s, "the mutation's anchor is not in the manifest"
open(sys.argv[2], "w").write(s.replace(old, '{ name = "spec_version", type = "uint64_t", offset = 56, size = 8 }'))
EOF
mutant_check() {  # LANGUAGE FACTS_FILE_FROM_THE_MUTATED_MANIFEST
  if diff -q "$WORK/layout.c.txt" "$2" >/dev/null; then
    fail "$1: a mutated manifest gave the header's layout: the layout check cannot fail"
  fi
  echo "ok: $1: a manifest with spec_version moved gives a layout the check refuses"
}

# ---- What a user writes: code lines (not blank, not comment-only) per program, and the lines that
# restate the ABI by hand (struct layouts, prototypes, library loading), which must be none: the
# header (cgo, Zig) or the binding generated from the manifest (the others) says all of it.
code_lines() { cat "$@" | grep -vE '^[[:space:]]*($|//|/\*|\*)' ; }
by_hand_check() {  # LANGUAGE PATTERN FILE...
  local lang="$1" pat="$2"; shift 2
  local n; n="$(code_lines "$@" | grep -cE "$pat" || true)"
  [ "$n" = 0 ] || { code_lines "$@" | grep -nE "$pat"; fail "$lang: $n line(s) restate the ABI by hand"; }
  echo "ok: $lang: $(cat "$@" | wc -l) lines, $(code_lines "$@" | wc -l) code lines, 0 restating the ABI by hand"
}
by_hand_check c '^[[:space:]]*(typedef|struct[[:space:]]+DL)' "$EX/c/steps.c"
by_hand_check go '^[[:space:]]*(typedef\b|struct[[:space:]]+\w+[[:space:]]*\{|[a-z_]+[[:space:]]+\*?(dlpack|DL)\w*\()' "$EX"/go/*.go
by_hand_check zig 'extern fn (dlpack|DL)|extern struct' "$EX/zig/steps.zig"
by_hand_check js 'koffi\.(struct|proto|func|load)\(|lib\.func\(' "$EX/js/steps.js"
by_hand_check java 'structLayout\(|FunctionDescriptor\.|downcallHandle\(|libraryLookup\(' "$EX/java/Steps.java"
by_hand_check jna 'extends (Structure|Library)|Native\.load\(|FieldOrder' "$EX/jna/Steps.java"
by_hand_check csharp 'DllImport|StructLayout|FieldOffset|UnmanagedFunctionPointer' "$EX/csharp/Steps.cs"
# The count can fail: a program with one hand-written prototype is refused.
printf '// a comment naming [DllImport] is fine\n  [DllImport("libdlpack_helpers.so.0.1")] static extern int dlpack_get_info(IntPtr p);\n' >"$WORK/by-hand.cs"
if (by_hand_check csharp 'DllImport' "$WORK/by-hand.cs") >/dev/null 2>&1; then
  fail "a hand-written prototype was not counted"
fi

# ---- C: the reference output, and the layout oracle
CFLAGS_SDK=($(pkg-config --cflags dlpack_helpers)) LIBS_SDK=($(pkg-config --libs dlpack_helpers))
cc -std=c11 -Wall -Wextra -Wpedantic -Werror "${CFLAGS_SDK[@]}" "$EX/c/steps.c" -o "$WORK/c-steps" \
  "${LIBS_SDK[@]}" -lpthread -Wl,-rpath,"$SDK/lib" || fail "the C reference does not build"
"$WORK/c-steps" >"$WORK/c.out" || { cat "$WORK/c.out"; fail "the C reference failed"; }
cat "$WORK/c.out"
grep -q '^(g) error object: 8 threads, 160000 failing calls, 0 wrong messages$' "$WORK/c.out" \
  || fail "the C reference's error stress did not run"
"${BINDGEN[@]}" c-layout "$MANIFEST" >"$WORK/layout.c"
cc "${CFLAGS_SDK[@]}" "$WORK/layout.c" -o "$WORK/layout-c" && "$WORK/layout-c" >"$WORK/layout.c.txt" \
  || fail "the layout oracle does not build or run"
echo "ok: C: reference output, $(wc -l <"$WORK/layout.c.txt") layout facts from the header"

# ---- Go (cgo): Debian golang-go
if command -v go >/dev/null 2>&1 || { echo "== apt-get install golang-go"; apt_get golang-go; }; then
  export GOCACHE="$CACHE/go-build" GOPATH="$CACHE/gopath" GOFLAGS=-modcacherw GOTOOLCHAIN=local
  mkdir -p "$WORK/go"; cp "$EX"/go/*.go "$EX/go/go.mod" "$WORK/go/"
  (cd "$WORK/go" && CGO_LDFLAGS="-Wl,-rpath,$SDK/lib" timed go build -o steps . && go vet .) \
    || fail "go: build or vet"
  "$WORK/go/steps" >"$WORK/go.out" || { cat "$WORK/go.out"; fail "go: the program failed"; }
  compare go "$WORK/go.out"
else
  skip go "no go, and golang-go could not be installed (not root, or apt-get failed: $WORK/apt.log)"
fi

# ---- Zig (translate-c): PyPI ziglang, the version scripts/constraints.txt pins, in .cache/ffi/venv
ZIG_PIN="$(sed -n 's/^ziglang==//p' scripts/constraints.txt)"
ZIG=(python3 -m ziglang)
zig_ok() { [ -x "$CACHE/venv/bin/python" ] && "$CACHE/venv/bin/python" -c "import ziglang" 2>/dev/null \
  && [ "$(cat "$CACHE/venv/.ziglang" 2>/dev/null)" = "$ZIG_PIN" ]; }
if zig_ok || { echo "== pip install ziglang==$ZIG_PIN into .cache/ffi/venv" \
      && rm -rf "$CACHE/venv" && python3 -m venv "$CACHE/venv" \
      && "$CACHE/venv/bin/pip" install --quiet --disable-pip-version-check "ziglang==$ZIG_PIN" \
      && echo "$ZIG_PIN" >"$CACHE/venv/.ziglang"; }; then
  ZIG=("$CACHE/venv/bin/python" -m ziglang)
  export ZIG_GLOBAL_CACHE_DIR="$CACHE/zig-cache" ZIG_LOCAL_CACHE_DIR="$CACHE/zig-cache"
  mkdir -p "$WORK/zig"; cp "$EX/zig/steps.zig" "$WORK/zig/"
  (cd "$WORK/zig" \
    && timed "${ZIG[@]}" translate-c -lc "${CFLAGS_SDK[@]}" "$SDK/include/dlpack_helpers.h" >dlpack_helpers.zig \
    && timed "${ZIG[@]}" build-exe steps.zig -lc "${LIBS_SDK[@]}" -rpath "$SDK/lib") || fail "zig: translate-c or build"
  "$WORK/zig/steps" >"$WORK/zig.out" || { cat "$WORK/zig.out"; fail "zig: the program failed"; }
  compare zig "$WORK/zig.out"
else
  skip zig "ziglang==$ZIG_PIN could not be installed from PyPI"
fi

# ---- JavaScript: Node (Debian nodejs) + koffi from npm, the version examples/ffi/js/package.json pins
KOFFI_PIN="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["dependencies"]["koffi"])' "$EX/js/package.json")"
koffi_ok() { [ "$(node -p 'require(process.argv[1]).version' "$CACHE/node_modules/koffi/package.json" 2>/dev/null)" = "$KOFFI_PIN" ]; }
if ! command -v node >/dev/null 2>&1; then
  skip js "no node (Debian: nodejs, npm)"
elif koffi_ok || { echo "== npm install koffi@$KOFFI_PIN into .cache/ffi" \
      && npm install --prefix "$CACHE" --no-audit --no-fund --loglevel=error "koffi@$KOFFI_PIN" >"$WORK/npm.log" 2>&1 \
      && koffi_ok; }; then
  mkdir -p "$WORK/js"; cp "$EX/js/steps.js" "$WORK/js/"
  "${BINDGEN[@]}" js "$MANIFEST" >"$WORK/js/dlpack_helpers_abi.js"
  export NODE_PATH="$CACHE/node_modules"
  js_facts() { node -e 'console.log(require(process.argv[1]).layoutFacts().join("\n"))' "$1"; }
  js_facts "$WORK/js/dlpack_helpers_abi.js" >"$WORK/js.layout.txt" && layout_check js "$WORK/js.layout.txt"
  "${BINDGEN[@]}" js "$WORK/abi.mutated.toml" >"$WORK/js/mutated_abi.js"
  js_facts "$WORK/js/mutated_abi.js" >"$WORK/js.mutated.txt"; mutant_check js "$WORK/js.mutated.txt"
  (cd "$WORK/js" && timed node steps.js >"$WORK/js.out") || { cat "$WORK/js.out"; fail "js: the program failed"; }
  compare js "$WORK/js.out"
else
  skip js "koffi@$KOFFI_PIN could not be installed from npm ($WORK/npm.log)"
fi

# ---- Java: FFM (final in Java 22): the newest JDK in /usr/lib/jvm (or JAVA_HOME)
JAVA_BIN=""; best=0
for j in ${JAVA_HOME:+"$JAVA_HOME"} /usr/lib/jvm/*; do
  [ -x "$j/bin/javac" ] || continue
  v="$("$j/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')"
  [ -n "$v" ] && [ "${v%%.*}" -gt "$best" ] 2>/dev/null && { best="${v%%.*}"; JAVA_BIN="$j/bin"; }
done
if [ -n "$JAVA_BIN" ] && [ "$best" -ge 22 ]; then
  mkdir -p "$WORK/java/dlpackhelpers"; cp "$EX/java/Steps.java" "$WORK/java/"
  java_facts() {  # MANIFEST DIR: generate, compile, print the layout facts
    mkdir -p "$2/dlpackhelpers"
    "${BINDGEN[@]}" java "$1" >"$2/dlpackhelpers/DlpackHelpersAbi.java"
    printf 'public class Facts { public static void main(String[] a) { dlpackhelpers.DlpackHelpersAbi.layoutFacts().forEach(System.out::println); } }\n' >"$2/Facts.java"
    "$JAVA_BIN/javac" -d "$2/out" "$2/dlpackhelpers/DlpackHelpersAbi.java" "$2/Facts.java" && "$JAVA_BIN/java" -cp "$2/out" Facts
  }
  java_facts "$MANIFEST" "$WORK/java" >"$WORK/java.layout.txt" && layout_check java "$WORK/java.layout.txt"
  java_facts "$WORK/abi.mutated.toml" "$WORK/java-mutated" >"$WORK/java.mutated.txt" || true
  mutant_check java "$WORK/java.mutated.txt"
  (cd "$WORK/java" && timed "$JAVA_BIN/javac" -d out Steps.java dlpackhelpers/DlpackHelpersAbi.java) || fail "java: javac"
  "$JAVA_BIN/java" --enable-native-access=ALL-UNNAMED -cp "$WORK/java/out" Steps >"$WORK/java.out" \
    || { cat "$WORK/java.out"; fail "java: the program failed"; }
  echo "   java: JDK $best ($JAVA_BIN), FFM"
  compare java "$WORK/java.out"
else
  skip java "no JDK 22 or newer in /usr/lib/jvm or JAVA_HOME (newest: ${best:-none}; Debian 12 ships 17)"
fi

# ---- Java: JNA (Debian libjna-java, JNA 5.13), with the JDK on PATH (Debian's 17) or the one above
JNA_JAR=/usr/share/java/jna.jar
JNA_JDK=""
if command -v javac >/dev/null 2>&1; then JNA_JDK="$(dirname "$(readlink -f "$(command -v javac)")")"; else JNA_JDK="$JAVA_BIN"; fi
if [ -z "$JNA_JDK" ]; then
  skip jna "no JDK (javac) on PATH or in /usr/lib/jvm"
elif [ -f "$JNA_JAR" ] || { echo "== apt-get install libjna-java"; apt_get libjna-java; }; then
  jna_facts() {  # MANIFEST DIR
    mkdir -p "$2/dlpackhelpers"
    "${BINDGEN[@]}" jna "$1" >"$2/dlpackhelpers/DlpackHelpersJna.java"
    printf 'public class Facts { public static void main(String[] a) { dlpackhelpers.DlpackHelpersJna.layoutFacts().forEach(System.out::println); } }\n' >"$2/Facts.java"
    "$JNA_JDK/javac" -cp "$JNA_JAR" -d "$2/out" "$2/dlpackhelpers/DlpackHelpersJna.java" "$2/Facts.java" \
      && "$JNA_JDK/java" -cp "$2/out:$JNA_JAR" Facts
  }
  jna_facts "$MANIFEST" "$WORK/jna" >"$WORK/jna.layout.txt" && layout_check jna "$WORK/jna.layout.txt"
  jna_facts "$WORK/abi.mutated.toml" "$WORK/jna-mutated" >"$WORK/jna.mutated.txt" || true
  mutant_check jna "$WORK/jna.mutated.txt"
  cp "$EX/jna/Steps.java" "$WORK/jna/"
  (cd "$WORK/jna" && timed "$JNA_JDK/javac" -cp "$JNA_JAR" -d out Steps.java dlpackhelpers/DlpackHelpersJna.java) \
    || fail "jna: javac"
  echo "   jna: $("$JNA_JDK/java" -version 2>&1 | head -n1), $(basename "$(readlink -f "$JNA_JAR")")"
  "$JNA_JDK/java" -cp "$WORK/jna/out:$JNA_JAR" Steps >"$WORK/jna.out" || { cat "$WORK/jna.out"; fail "jna: the program failed"; }
  compare jna "$WORK/jna.out"
else
  skip jna "libjna-java could not be installed (not root, or apt-get failed)"
fi

# ---- C#: Mono (Debian mono-mcs, mono-runtime)
if { command -v mcs && command -v mono; } >/dev/null 2>&1 \
   || { echo "== apt-get install mono-mcs mono-runtime"; apt_get mono-mcs mono-runtime; }; then
  mkdir -p "$WORK/csharp"; cp "$EX/csharp/Steps.cs" "$WORK/csharp/"
  cs_facts() {  # MANIFEST DIR
    mkdir -p "$2"
    "${BINDGEN[@]}" csharp "$1" >"$2/DlpackHelpersAbi.cs"
    printf 'static class Facts { static void Main() { foreach (var l in DlpackHelpers.Abi.LayoutFacts()) System.Console.WriteLine(l); } }\n' >"$2/Facts.cs"
    mcs -nologo -unsafe -out:"$2/facts.exe" "$2/DlpackHelpersAbi.cs" "$2/Facts.cs" >"$2/mcs.log" 2>&1 \
      || { cat "$2/mcs.log" >&2; return 1; }
    mono "$2/facts.exe"
  }
  cs_facts "$MANIFEST" "$WORK/csharp" >"$WORK/csharp.layout.txt" && layout_check csharp "$WORK/csharp.layout.txt"
  cs_facts "$WORK/abi.mutated.toml" "$WORK/csharp-mutated" >"$WORK/csharp.mutated.txt" || true
  mutant_check csharp "$WORK/csharp.mutated.txt"
  (cd "$WORK/csharp" && timed mcs -nologo -unsafe -warnaserror -out:steps.exe Steps.cs DlpackHelpersAbi.cs) \
    || fail "csharp: mcs"
  mono "$WORK/csharp/steps.exe" >"$WORK/csharp.out" || { cat "$WORK/csharp.out"; fail "csharp: the program failed"; }
  compare csharp "$WORK/csharp.out"
else
  skip csharp "no mcs/mono, and mono-mcs mono-runtime could not be installed (not root, or apt-get failed)"
fi

echo "ffi: ${#passed[@]} languages gave the C reference's output: ${passed[*]}"
[ "${#skipped[@]}" = 0 ] || printf 'ffi: skipped: %s\n' "${skipped[@]}"
