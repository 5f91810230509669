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

    /// A page mapped and then unmapped: an aligned user-space address that surely faults.
    fn unmapped_page() -> usize {
        // SAFETY: an anonymous private mapping of one page, then unmapped; only its address
        // is kept, never dereferenced.
        unsafe {
            let page = libc::sysconf(libc::_SC_PAGESIZE) as usize;
            let p = libc::mmap(
                core::ptr::null_mut(),
                page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            assert_ne!(p, libc::MAP_FAILED);
            assert_eq!(libc::munmap(p, page), 0);
            p as usize
        }
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

    #[test]
    fn unreadable_memory_is_refused_without_a_fault() {
        let mut out = [0u8; 56];
        for addr in [
            0usize,
            8,
            4088,
            unmapped_page(),
            usize::MAX - 55,
            usize::MAX - 7,
        ] {
            assert_eq!(copy_from(addr, &mut out), Probe::Unreadable, "{addr:#x}");
        }
        #[cfg(target_pointer_width = "64")]
        for addr in [(1usize << 47) + 8, 0x7fff_ffff_ffff_fff8, 1 << 63] {
            assert_eq!(copy_from(addr, &mut out), Probe::Unreadable, "{addr:#x}");
        }
    }

    /// A range that starts in readable memory and ends in an unmapped page is unreadable (the
    /// whole struct is checked, not its first byte).
    #[test]
    fn a_range_ending_in_unmapped_memory_is_unreadable() {
        // SAFETY: two anonymous pages, the second unmapped again; the first is read only
        // through `copy_from` and unmapped at the end.
        unsafe {
            let page = libc::sysconf(libc::_SC_PAGESIZE) as usize;
            let p = libc::mmap(
                core::ptr::null_mut(),
                2 * page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            assert_ne!(p, libc::MAP_FAILED);
            assert_eq!(libc::munmap(p.cast::<u8>().add(page).cast(), page), 0);
            let tail = p as usize + page - 16;
            let mut header = [0xffu8; 16];
            assert_eq!(copy_from(tail, &mut header), Probe::Readable);
            assert_eq!(header, [0u8; 16]);
            let mut whole = [0u8; 56];
            assert_eq!(copy_from(tail, &mut whole), Probe::Unreadable);
            // PROT_NONE memory is mapped but not readable.
            assert_eq!(libc::mprotect(p, page, libc::PROT_NONE), 0);
            assert_eq!(copy_from(p as usize, &mut header), Probe::Unreadable);
            assert_eq!(libc::munmap(p, page), 0);
        }
    }
}
