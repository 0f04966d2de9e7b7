//! The kernel's limits a parser process puts on itself before it reads a document: its address
//! space (so a decompression bomb fails an allocation instead of eating the machine: what it
//! maps once started, its own code and stacks, plus the cap), no core files, and a CPU budget per job (past it the kernel sends SIGXCPU, which ends the process);
//! and a watch on its parent, so a parser never outlives the run that started it. Unix only:
//! elsewhere these are no-ops and the parent's deadline is the only bound.

use std::io;
use std::time::Duration;

/// How often a parser looks whether its parent is still there.
const PARENT_POLL: Duration = Duration::from_millis(100);

/// Caps the address space this process may map beyond what it maps now at `bytes`, and turns
/// core files off.
pub fn cap_memory(bytes: u64) -> io::Result<()> {
    #[cfg(unix)]
    {
        set(libc::RLIMIT_CORE, 0, Some(0))?;
        let cap = mapped_bytes().saturating_add(bytes);
        set(libc::RLIMIT_AS, cap, Some(cap))
    }
    #[cfg(not(unix))]
    {
        let _ = bytes;
        Ok(())
    }
}

/// Lets this process use `seconds` more of CPU from now (and no more).
pub fn cpu_budget(seconds: u64) -> io::Result<()> {
    #[cfg(unix)]
    {
        set(libc::RLIMIT_CPU, cpu_used_seconds() + seconds, None)
    }
    #[cfg(not(unix))]
    {
        let _ = seconds;
        Ok(())
    }
}

/// Ends this process as soon as its parent (`parent`, the pid that started it) is gone: a run
/// killed or crashed does not leave a parser burning a core for its job's whole budget.
pub fn exit_with_parent(parent: u32) -> io::Result<()> {
    #[cfg(unix)]
    {
        let gone = move || {
            // SAFETY: `getppid` reads this process's parent id; it has no preconditions.
            let now = unsafe { libc::getppid() };
            u32::try_from(now).ok() != Some(parent)
        };
        if gone() {
            std::process::exit(0);
        }
        std::thread::Builder::new()
            .name("parent-watch".into())
            .stack_size(64 * 1024)
            .spawn(move || {
                loop {
                    std::thread::sleep(PARENT_POLL);
                    if gone() {
                        // SAFETY: `_exit` ends the process at once, without running the main
                        // thread's destructors, which may be in the middle of a parse.
                        unsafe { libc::_exit(0) };
                    }
                }
            })?;
        Ok(())
    }
    #[cfg(not(unix))]
    {
        let _ = parent;
        Ok(())
    }
}

/// What `setrlimit` names a resource by: glibc has a type of its own.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
type Resource = libc::__rlimit_resource_t;
#[cfg(all(unix, not(all(target_os = "linux", target_env = "gnu"))))]
type Resource = libc::c_int;

/// Sets `resource`'s soft limit to `soft`, and its hard limit to `hard` when given (else leaves
/// it); neither is raised past the hard limit in force.
#[cfg(unix)]
fn set(resource: Resource, soft: u64, hard: Option<u64>) -> io::Result<()> {
    let mut now = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `getrlimit` writes one `rlimit` into the struct it is given, which lives here.
    if unsafe { libc::getrlimit(resource, &mut now) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let max = hard.map_or(now.rlim_max, |h| h.min(now.rlim_max));
    let limit = libc::rlimit {
        rlim_cur: soft.min(max),
        rlim_max: max,
    };
    // SAFETY: `setrlimit` reads the struct it is given; lowering a limit is always allowed.
    match unsafe { libc::setrlimit(resource, &limit) } {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}

/// The address space this process maps now (Linux: `/proc/self/statm`; elsewhere 0).
#[cfg(unix)]
fn mapped_bytes() -> u64 {
    let pages = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|statm| statm.split_whitespace().next()?.parse::<u64>().ok())
        .unwrap_or(0);
    // SAFETY: `sysconf` reads a constant of the system; it has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    pages.saturating_mul(u64::try_from(page).unwrap_or(4096))
}

/// The CPU seconds this process has used (user and system), rounded up.
#[cfg(unix)]
fn cpu_used_seconds() -> u64 {
    // SAFETY: an all-zero `rusage` is a valid value of the plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `getrusage` writes one `rusage` into the struct it is given, which lives here.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return 0;
    }
    let seconds = usage.ru_utime.tv_sec + usage.ru_stime.tv_sec;
    let micros = usage.ru_utime.tv_usec + usage.ru_stime.tv_usec;
    u64::try_from(seconds).unwrap_or(0) + u64::try_from(micros).unwrap_or(0) / 1_000_000 + 1
}
