//! Reading memory at an address a foreign party gave as an integer, without faulting.
//!
//! Used for the DLPack 1.2 integer form of the exchange API (`__c_dlpack_exchange_api__`), the
//! one place where this library receives a bare address it has no other reason to trust. The
//! bytes are handed to the kernel (`write()` into a fresh pipe, then read back): for memory this
//! process cannot read (unmapped, `PROT_NONE`, a non-canonical address) the kernel answers
//! `EFAULT` instead of raising `SIGSEGV`. `process_vm_readv` would do the same without a pipe,
//! but seccomp profiles (containers, sandboxes) often block it; a pipe works everywhere.
//!
//! Cost: one `pipe` and two `close`, and a `write` + `read` per 512 bytes; the exchange API
//! runs it only when a type's table is first looked up (the answer is cached per type).

use core::ffi::c_void;

/// What [`copy_from`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Probe {
    /// Every byte was readable; the output holds a copy of them.
    Readable,
    /// Some byte is not readable memory (`EFAULT`, or a range that wraps around).
    Unreadable,
    /// The check could not run (the pipe could not be made or read: the `errno`). Not a fact
    /// about the address: ask again later.
    Unchecked(i32),
}

/// POSIX's smallest `PIPE_BUF`: a write of at most this many bytes into an empty pipe is atomic
/// and never blocks, on every POSIX system.
const CHUNK: usize = 512;

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// A pipe whose two ends are closed on drop (close-on-exec, so a concurrent `fork` + `exec`
/// never inherits them).
struct Pipe([libc::c_int; 2]);

impl Pipe {
    fn new() -> Result<Pipe, i32> {
        let mut fds = [-1 as libc::c_int; 2];
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            // SAFETY: `fds` is a writable array of two ints, as pipe2 requires.
            if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
                return Err(errno());
            }
        }
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        {
            // SAFETY: `fds` is a writable array of two ints, as pipe requires.
            if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
                return Err(errno());
            }
            for fd in fds {
                // SAFETY: `fd` is an open descriptor we own; F_SETFD takes an int flag.
                unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
            }
        }
        Ok(Pipe(fds))
    }
}

impl Drop for Pipe {
    fn drop(&mut self) {
        for fd in self.0 {
            // SAFETY: `fd` is an open descriptor this struct owns, closed once (an EINTR from
            // close is not retried: the descriptor is released either way on Linux).
            unsafe { libc::close(fd) };
        }
    }
}

/// Copy `out.len()` bytes from address `addr` into `out` if every one of them is readable
/// memory of this process; never dereferences `addr` (the kernel reads it, answering `EFAULT`
/// for an unreadable byte). On `Unreadable` or `Unchecked`, `out` holds unspecified bytes.
///
/// A readable answer is about this moment: memory unmapped afterwards by another thread is not
/// covered (the exchange API's tables are static, which the producer vouches for).
pub(crate) fn copy_from(addr: usize, out: &mut [u8]) -> Probe {
    if addr.checked_add(out.len()).is_none() {
        return Probe::Unreadable;
    }
    let pipe = match Pipe::new() {
        Ok(p) => p,
        Err(e) => return Probe::Unchecked(e),
    };
    let [rd, wr] = pipe.0;
    for (i, chunk) in out.chunks_mut(CHUNK).enumerate() {
        let src = (addr + i * CHUNK) as *const c_void;
        let n = chunk.len();
        let written = loop {
            // SAFETY: `write` only reads `n` bytes at `src` in the kernel, which reports
            // EFAULT for an unreadable byte instead of faulting; `wr` is our pipe's write end.
            let r = unsafe { libc::write(wr, src, n) };
            if r < 0 && errno() == libc::EINTR {
                continue;
            }
            break r;
        };
        if written < 0 {
            return match errno() {
                libc::EFAULT => Probe::Unreadable,
                e => Probe::Unchecked(e),
            };
        }
        if written as usize != n {
            // A short write: the range ends in unreadable memory.
            return Probe::Unreadable;
        }
        let mut got = 0;
        while got < n {
            // SAFETY: `chunk[got..]` is writable memory of `n - got` bytes; `rd` is our pipe's
            // read end, holding the `n - got` bytes not read yet.
            let r = unsafe { libc::read(rd, chunk[got..].as_mut_ptr().cast(), n - got) };
            if r < 0 && errno() == libc::EINTR {
                continue;
            }
            if r <= 0 {
                return Probe::Unchecked(if r < 0 { errno() } else { 0 });
            }
            got += r as usize;
        }
    }
    Probe::Readable
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Anonymous pages this test owns until it drops them: a reservation the address space
    /// keeps, so no other thread of the test process (thread stacks, a sibling test's mapping,
    /// the allocator) can be handed its addresses while a test probes them. A page that was
    /// mapped and then unmapped is no such thing: the next `mmap` of any thread may reuse it,
    /// and a probe of it then reads memory (a test that fails without a fault).
    struct Pages {
        at: *mut c_void,
        len: usize,
    }

    impl Pages {
        /// `n` pages, mapped with protection `prot`.
        fn new(n: usize, prot: libc::c_int) -> Pages {
            let len = n * page_size();
            // SAFETY: an anonymous private mapping at an address the kernel picks; nothing
            // else refers to it.
            let at = unsafe {
                libc::mmap(
                    core::ptr::null_mut(),
                    len,
                    prot,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            assert_ne!(at, libc::MAP_FAILED, "mmap: errno {}", errno());
            Pages { at, len }
        }

        fn addr(&self) -> usize {
            self.at as usize
        }

        /// Make page `i` unreadable (`PROT_NONE`): still reserved, so no one else gets it.
        fn protect_none(&self, i: usize) {
            let page = page_size();
            assert!((i + 1) * page <= self.len);
            // SAFETY: page `i` lies inside this mapping, which this struct owns.
            let r = unsafe {
                libc::mprotect(
                    (self.addr() + i * page) as *mut c_void,
                    page,
                    libc::PROT_NONE,
                )
            };
            assert_eq!(r, 0, "mprotect: errno {}", errno());
        }
    }

    impl Drop for Pages {
        fn drop(&mut self) {
            // SAFETY: the mapping this struct made, unmapped once.
            unsafe { libc::munmap(self.at, self.len) };
        }
    }

    fn page_size() -> usize {
        // SAFETY: sysconf has no preconditions.
        unsafe { libc::sysconf(libc::_SC_PAGESIZE) as usize }
    }

    #[test]
    fn readable_memory_is_copied_exactly() {
        let src: Vec<u8> = (0..2000u32).map(|i| (i * 7) as u8).collect();
        let mut out = vec![0u8; src.len()];
        assert_eq!(copy_from(src.as_ptr() as usize, &mut out), Probe::Readable);
        assert_eq!(out, src);
        let mut one = [0u8; 1];
        assert_eq!(
            copy_from(src.as_ptr() as usize + 1999, &mut one),
            Probe::Readable
        );
        assert_eq!(one[0], src[1999]);
        assert_eq!(copy_from(src.as_ptr() as usize, &mut []), Probe::Readable);
    }

    /// Addresses no thread can make readable while the test runs: the first page (below
    /// `vm.mmap_min_addr`), a `PROT_NONE` reservation this test holds, ranges that wrap around,
    /// and addresses where Linux maps nothing.
    #[test]
    fn unreadable_memory_is_refused_without_a_fault() {
        let reserved = Pages::new(1, libc::PROT_NONE);
        let mut out = [0u8; 56];
        for addr in [
            0usize,
            8,
            4088,
            reserved.addr(),
            reserved.addr() + 8,
            usize::MAX - 55,
            usize::MAX - 7,
        ] {
            assert_eq!(copy_from(addr, &mut out), Probe::Unreadable, "{addr:#x}");
        }
        // The top half of the address space belongs to the kernel on every 64-bit Linux.
        #[cfg(target_pointer_width = "64")]
        assert_eq!(copy_from(1 << 63, &mut out), Probe::Unreadable);
        // x86-64: the last page below 2**47 is a guard page Linux never maps, and nothing above
        // 2**47 is mapped unless a caller asks for it with an `mmap` hint (5-level paging).
        #[cfg(target_arch = "x86_64")]
        for addr in [0x7fff_ffff_ffff_fff8, (1usize << 47) + 8] {
            assert_eq!(copy_from(addr, &mut out), Probe::Unreadable, "{addr:#x}");
        }
    }

    /// A range that starts in readable memory and ends in an unreadable page is unreadable
    /// (the whole struct is checked, not its first byte). Both pages stay reserved by this
    /// test, the second `PROT_NONE`, so no other thread's mapping can land there.
    #[test]
    fn a_range_ending_in_unreadable_memory_is_unreadable() {
        let page = page_size();
        let pages = Pages::new(2, libc::PROT_READ | libc::PROT_WRITE);
        pages.protect_none(1);
        let tail = pages.addr() + page - 16;
        let mut header = [0xffu8; 16];
        assert_eq!(copy_from(tail, &mut header), Probe::Readable);
        assert_eq!(header, [0u8; 16]);
        let mut whole = [0u8; 56];
        assert_eq!(copy_from(tail, &mut whole), Probe::Unreadable);
        // A whole PROT_NONE page is mapped but not readable either.
        pages.protect_none(0);
        assert_eq!(copy_from(pages.addr(), &mut header), Probe::Unreadable);
    }
}
