//! The orphans of the programs Prill starts (Linux only).
//!
//! A program's helper that leaves its process group (`setsid cmd &`, a daemonising
//! server, a double fork) is not reached by the signals that end the group. So the first
//! program Prill starts makes this process a *child subreaper*
//! (`PR_SET_CHILD_SUBREAPER`, [`adopt_orphans`]): such a helper, once its parent is
//! gone, becomes a child of this process instead of init's, and Prill ends it.
//!
//! Which processes are ended: only children of this process that Prill did not start
//! itself (the programs it manages, [`started`], are never touched here), and of those
//! only the ones that descend from a program Prill started. A program's descendant is
//! known by any of
//!
//! - the mark Prill puts in the program's environment ([`MARK`], `<pid>.<n>`: this
//!   process's id and the program's number), which what it starts inherits;
//! - its process group: the program's own, or one that an ended orphan led;
//! - having been among the program's descendants when its conversation ended
//!   ([`Lineage::of`] reads the tree before the group is signalled).
//!
//! An embedding program's own children and their orphans carry none of these: they are
//! never signalled nor reaped (an orphan of theirs that exits stays a zombie child of
//! this process until it exits; a subreaper adopts every descendant's orphans).
//! [`end_lineage`] ends one program's orphans once its group has been ended (`SIGTERM`,
//! `SIGKILL` [`GROUP_GRACE`] later, each reaped so that none is left a zombie), and so
//! never those of a conversation still going on; [`end_all_now`] kills at once every
//! orphan of every program whose conversation has ended, for a program about to exit.
//! Processes are found through `/proc` (`/proc/<pid>/task/<tid>/children`, else every
//! `/proc/<pid>/stat`); only a child of this process (or the group it leads) is
//! signalled, and only after its start time is checked, so a pid the system gave to
//! another process is never hit.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::io::Read as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, Once, OnceLock};
use std::time::{Duration, Instant};

use rustix::process::{
    Pid, Signal, WaitOptions, getpid, kill_process, kill_process_group, set_child_subreaper,
    waitpid,
};

use super::GROUP_GRACE;

/// The variable that marks a program Prill started, and everything it starts.
pub(super) const MARK: &str = "PRILL_STARTED_BY";

/// How often an ending lineage is looked at again.
const TICK: Duration = Duration::from_millis(50);

/// The most an environment read to find the mark takes.
const ENVIRON_CAP: u64 = 4 * 1024 * 1024;

/// Makes this process a child subreaper, once: from now on the orphans of its
/// descendants are re-parented to it rather than to init. This is process-wide state;
/// the first program Prill starts calls it.
pub(super) fn adopt_orphans() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| match set_child_subreaper(Some(getpid())) {
        Ok(()) => tracing::debug!("this process adopts the orphans of the programs it starts"),
        Err(e) => tracing::debug!(error = %e, "could not become a child subreaper"),
    });
}

/// The mark of the next program started: `<this process's id>.<n>`.
pub(super) fn next_mark() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("{}.{n}", getpid().as_raw_nonzero())
}

/// The programs Prill started and still manages, with their marks: never signalled or
/// reaped here, but by [`end_everything_now`].
fn leaders() -> MutexGuard<'static, BTreeMap<i32, String>> {
    static LEADERS: Mutex<BTreeMap<i32, String>> = Mutex::new(BTreeMap::new());
    LEADERS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Records `pid` as a program Prill started and manages, marked `mark`.
pub(super) fn started(pid: i32, mark: &str) {
    leaders().insert(pid, mark.to_owned());
    live().insert(mark.to_owned());
}

/// Forgets `pid`: its [`super::Process`] is gone.
pub(super) fn forget(pid: i32) {
    leaders().remove(&pid);
}

/// The marks of the programs whose conversation goes on (any other mark of this
/// process is a program's whose conversation has ended).
fn live() -> MutexGuard<'static, BTreeSet<String>> {
    static LIVE: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Held while processes are signalled and reaped, so that no sweep signals a pid that
/// another one has just reaped (and the system may have given to a new process).
fn reaping() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// What `/proc/<pid>/stat` says of a process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stat {
    ppid: i32,
    pgrp: i32,
    /// When it started (clock ticks since boot): with the pid, who it is.
    start: u64,
}

/// Reads `/proc/<pid>/stat`; `None` when there is no such process.
fn stat(pid: i32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

/// Parses a `stat` line: `pid (comm) state ppid pgrp session ... starttime ...`. The
/// name may hold anything, `)` included, so fields are counted from its last `)`.
fn parse_stat(text: &str) -> Option<Stat> {
    let fields: Vec<&str> = text.rsplit_once(')')?.1.split_whitespace().collect();
    // Field 3 (state) is at 0, so field k is at k - 3.
    Some(Stat {
        ppid: fields.get(1)?.parse().ok()?,
        pgrp: fields.get(2)?.parse().ok()?,
        start: fields.get(19)?.parse().ok()?,
    })
}

/// Whether the kernel lists children in `/proc/<pid>/task/<tid>/children`.
fn children_files() -> bool {
    static THERE: OnceLock<bool> = OnceLock::new();
    *THERE.get_or_init(|| {
        let me = getpid().as_raw_nonzero();
        std::path::Path::new(&format!("/proc/{me}/task/{me}/children")).exists()
    })
}

/// The children of `parent`, as `/proc` lists them now.
fn children(parent: i32) -> Vec<i32> {
    if !children_files() {
        return scan(|s| s.ppid == parent);
    }
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{parent}/task")) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for task in tasks.flatten() {
        let path = task.path().join("children");
        if let Ok(text) = std::fs::read_to_string(path) {
            found.extend(
                text.split_whitespace()
                    .filter_map(|p| p.parse::<i32>().ok()),
            );
        }
    }
    found
}

/// Every process whose `stat` satisfies `keep` (for kernels without `children` files).
fn scan(keep: impl Fn(&Stat) -> bool) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| stat(pid).is_some_and(|s| keep(&s)))
        .collect()
}

/// Whether process `pid`'s environment holds [`MARK`] with a value `wanted` accepts.
fn marked(pid: i32, wanted: impl Fn(&[u8]) -> bool) -> bool {
    let Ok(file) = std::fs::File::open(format!("/proc/{pid}/environ")) else {
        return false;
    };
    let mut environ = Vec::new();
    if file.take(ENVIRON_CAP).read_to_end(&mut environ).is_err() {
        return false;
    }
    let prefix = format!("{MARK}=");
    environ
        .split(|&b| b == 0)
        .filter_map(|entry| entry.strip_prefix(prefix.as_bytes()))
        .any(wanted)
}

/// A process, told from a later one with the same pid.
type Stamp = (i32, u64);

/// What is known of one program Prill started when its conversation ends.
#[derive(Debug)]
pub(super) struct Lineage {
    /// Its [`MARK`].
    mark: String,
    /// Its process group (its pid).
    group: i32,
    /// Its descendants when the conversation ended.
    seen: HashSet<Stamp>,
}

impl Lineage {
    /// The lineage of the program that leads `group`, marked `mark`, whose
    /// conversation is ending, with its descendants as they are now (read before the
    /// group is signalled).
    pub(super) fn of(mark: String, group: i32) -> Lineage {
        live().remove(&mark);
        let mut seen = HashSet::new();
        let mut next = vec![group];
        while let Some(parent) = next.pop() {
            for child in children(parent) {
                if let Some(s) = stat(child)
                    && seen.insert((child, s.start))
                {
                    next.push(child);
                }
            }
        }
        Lineage { mark, group, seen }
    }
}

/// One orphan being ended.
#[derive(Debug)]
struct Target {
    start: u64,
    /// Whether it leads its process group (then the group is signalled).
    leads: bool,
    /// When it was sent `SIGTERM`.
    termed: Instant,
    killed: bool,
}

/// The ending of one lineage's orphans.
#[derive(Debug)]
struct Sweep {
    me: i32,
    lineage: Lineage,
    /// The process groups whose members belong to the lineage.
    groups: HashSet<i32>,
    targets: HashMap<i32, Target>,
}

impl Sweep {
    fn new(lineage: Lineage) -> Sweep {
        Sweep {
            me: getpid().as_raw_nonzero().get(),
            groups: HashSet::from([lineage.group]),
            lineage,
            targets: HashMap::new(),
        }
    }

    /// Whether child `pid` of this process belongs to the lineage.
    fn belongs(&self, pid: i32, stat: &Stat) -> bool {
        self.groups.contains(&stat.pgrp)
            || self.lineage.seen.contains(&(pid, stat.start))
            || marked(pid, |v| v == self.lineage.mark.as_bytes())
    }

    /// Finds the lineage's new orphans, reaps those that ended, signals the rest;
    /// whether any is left.
    fn tick(&mut self) -> bool {
        let _reaping = reaping();
        let managed: BTreeSet<i32> = leaders().keys().copied().collect();
        for pid in children(self.me) {
            if managed.contains(&pid) || self.targets.contains_key(&pid) {
                continue;
            }
            if let Some(s) = stat(pid)
                && s.ppid == self.me
                && self.belongs(pid, &s)
            {
                tracing::debug!(pid, group = s.pgrp, "ending an orphan of a program");
                if s.pgrp == pid {
                    self.groups.insert(pid);
                }
                let target = Target {
                    start: s.start,
                    leads: s.pgrp == pid,
                    termed: Instant::now(),
                    killed: false,
                };
                signal(pid, target.leads, Signal::TERM);
                self.targets.insert(pid, target);
            }
        }
        let me = self.me;
        self.targets.retain(|&pid, target| {
            // Only an unreaped child of this process keeps its pid: anything else is
            // gone, or someone else's.
            if !stat(pid).is_some_and(|s| s.ppid == me && s.start == target.start) {
                return false;
            }
            if reap(pid) {
                return false;
            }
            if !target.killed && target.termed.elapsed() >= GROUP_GRACE {
                target.killed = true;
                signal(pid, target.leads, Signal::KILL);
            }
            true
        });
        !self.targets.is_empty()
    }
}

/// Sends `signal` to `pid`, or to the group it leads.
fn signal(pid: i32, group: bool, signal: Signal) {
    let Some(pid) = Pid::from_raw(pid) else {
        return;
    };
    let _ = if group {
        kill_process_group(pid, signal)
    } else {
        kill_process(pid, signal)
    };
}

/// Reaps child `pid` if it has ended; whether it had.
fn reap(pid: i32) -> bool {
    let Some(pid) = Pid::from_raw(pid) else {
        return true;
    };
    !matches!(waitpid(Some(pid), WaitOptions::NOHANG), Ok(None))
}

/// Ends the orphans of `lineage`, whose process group has been ended: each is sent
/// `SIGTERM`, `SIGKILL` [`GROUP_GRACE`] later, and reaped. The first look is made now;
/// when orphans are left, a thread of its own goes on for at most three graces.
pub(super) fn end_lineage(lineage: Lineage) {
    let mut sweep = Sweep::new(lineage);
    if !sweep.tick() {
        return;
    }
    let deadline = Instant::now() + 3 * GROUP_GRACE;
    let spawned = std::thread::Builder::new()
        .name("prill-orphans".to_owned())
        .spawn(move || {
            while Instant::now() < deadline {
                std::thread::sleep(TICK);
                if !sweep.tick() {
                    return;
                }
            }
            tracing::debug!(left = sweep.targets.len(), "orphans outlived their ending");
        });
    if let Err(e) = spawned {
        tracing::debug!(error = %e, "could not wait for the orphans to end");
    }
}

/// Sends `SIGKILL` at once to every orphan of every program this process started whose
/// conversation has ended (by their [`MARK`], or as members of `groups`), and reaps
/// what ends within a moment: for a program about to exit.
pub(super) fn end_all_now(groups: &[i32]) {
    let me = getpid().as_raw_nonzero().get();
    let _reaping = reaping();
    let managed: BTreeSet<i32> = leaders().keys().copied().collect();
    let live = live().clone();
    let ours = format!("{me}.");
    let mut killed = Vec::new();
    for pid in children(me) {
        if managed.contains(&pid) {
            continue;
        }
        if let Some(s) = stat(pid)
            && s.ppid == me
            && (groups.contains(&s.pgrp)
                || marked(pid, |v| {
                    std::str::from_utf8(v).is_ok_and(|v| v.starts_with(&ours) && !live.contains(v))
                }))
        {
            signal(pid, s.pgrp == pid, Signal::KILL);
            killed.push(pid);
        }
    }
    let deadline = Instant::now() + Duration::from_millis(200);
    while !killed.is_empty() && Instant::now() < deadline {
        killed.retain(|&pid| !reap(pid));
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Ends at once everything this process started that is still there, for a process
/// that must exit now (a second stop signal): every program it manages is sent
/// `SIGKILL` with its process group, and so is every one of their descendants, those
/// that left the group included, and every orphan of an earlier program
/// ([`end_all_now`]). The programs' descendants are read before they are signalled; once
/// a program has ended, they are children of this process, and each is signalled only
/// as such. It waits at most half a second for them to end.
pub(super) fn end_everything_now(groups: &[i32]) {
    let me = getpid().as_raw_nonzero().get();
    let programs: Vec<(i32, String)> = std::mem::take(&mut *leaders()).into_iter().collect();
    let lineages: Vec<Lineage> = programs
        .iter()
        .map(|(pid, mark)| Lineage::of(mark.clone(), *pid))
        .collect();
    let mut groups: HashSet<i32> = groups.iter().copied().collect();
    for (pid, _) in &programs {
        signal(*pid, true, Signal::KILL);
        groups.insert(*pid);
    }
    let ours = format!("{me}.");
    let _reaping = reaping();
    let deadline = Instant::now() + Duration::from_millis(500);
    // Each group's leader, a program of this process (ended, or ended here), is waited
    // for: its children become this process's once it is reaped.
    let mut waiting: Vec<i32> = groups.iter().copied().collect();
    loop {
        waiting.retain(|&pid| !reap(pid));
        let mut found = false;
        for pid in children(me) {
            let Some(s) = stat(pid).filter(|s| s.ppid == me) else {
                continue;
            };
            if waiting.contains(&pid) {
                continue;
            }
            if groups.contains(&s.pgrp)
                || lineages.iter().any(|l| l.seen.contains(&(pid, s.start)))
                || marked(pid, |v| v.starts_with(ours.as_bytes()))
            {
                if s.pgrp == pid {
                    groups.insert(pid);
                }
                signal(pid, s.pgrp == pid, Signal::KILL);
                waiting.push(pid);
                found = true;
            }
        }
        if (!found && waiting.is_empty()) || Instant::now() >= deadline {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_are_read_from_the_last_parenthesis() {
        let line = "4242 (a (weird) name) S 1 4242 4242 0 -1 4194560 96 0 0 0 0 0 0 0 20 0 1 0 123456 2506752 224 18446744073709551615";
        assert_eq!(
            parse_stat(line),
            Some(Stat {
                ppid: 1,
                pgrp: 4242,
                start: 123_456
            })
        );
        assert_eq!(parse_stat("4242 (cut"), None);
        assert_eq!(parse_stat("4242 (short) S 1"), None);
    }

    #[test]
    fn this_process_is_found_under_its_parent_with_its_mark() {
        let me = getpid().as_raw_nonzero().get();
        let mine = stat(me).expect("this process has a stat");
        let parent = rustix::process::getppid().map_or(0, |p| p.as_raw_nonzero().get());
        assert_eq!(mine.ppid, parent);
        assert!(children(parent).contains(&me), "its parent lists it");
        assert_eq!(marked(me, |_| true), std::env::var_os(MARK).is_some());
    }

    /// A `sleep` child of this process (as an embedding program starts its own, or as
    /// an orphan would be once adopted), with `mark` in its environment when given.
    fn sleeper(mark: Option<&str>, own_session: bool) -> std::process::Child {
        let mut command = if own_session {
            let mut c = std::process::Command::new("setsid");
            c.arg("sleep");
            c
        } else {
            std::process::Command::new("sleep")
        };
        command.arg("30");
        if let Some(mark) = mark {
            command.env(MARK, mark);
        }
        command.spawn().unwrap()
    }

    /// Whether `child` still exists (running, or a zombie nobody reaped).
    fn exists(child: &std::process::Child) -> bool {
        std::path::Path::new(&format!("/proc/{}", child.id())).exists()
    }

    /// Waits until `child` is gone, for at most a few seconds.
    fn until_gone(child: &std::process::Child) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while exists(child) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[test]
    fn a_sweep_ends_and_reaps_its_lineage_only() {
        adopt_orphans();
        let me = getpid().as_raw_nonzero().get();
        let mark = format!("{me}.sweep-test");
        let mut embedders = sleeper(None, true);
        // Another program's, whose conversation goes on.
        let another = format!("{me}.another");
        live().insert(another.clone());
        let mut other = sleeper(Some(&another), true);
        let mut orphan = sleeper(Some(&mark), true);
        // Wait until `setsid` has made its session and exec'd `sleep` with the mark.
        let deadline = Instant::now() + Duration::from_secs(5);
        let pid = i32::try_from(orphan.id()).unwrap();
        while !marked(pid, |v| v == mark.as_bytes()) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let lineage = Lineage {
            mark,
            group: i32::MAX,
            seen: HashSet::new(),
        };
        let mut sweep = Sweep::new(lineage);
        let deadline = Instant::now() + Duration::from_secs(5);
        while sweep.tick() && Instant::now() < deadline {
            std::thread::sleep(TICK);
        }
        until_gone(&orphan);
        let orphan_gone = !exists(&orphan);
        let kept = exists(&embedders) && exists(&other);
        for child in [&mut embedders, &mut other, &mut orphan] {
            let _ = child.kill();
            let _ = child.wait();
        }
        live().remove(&another);
        assert!(orphan_gone, "the lineage's process was ended and reaped");
        assert!(
            kept,
            "an unmarked child and another lineage's are left alone"
        );
    }

    #[test]
    fn at_exit_only_the_orphans_of_ended_programs_are_killed() {
        adopt_orphans();
        let me = getpid().as_raw_nonzero().get();
        let mark = format!("{me}.exit-test");
        let mut embedders = sleeper(None, false);
        let mut orphan = sleeper(Some(&mark), false);
        let pid = i32::try_from(orphan.id()).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while !marked(pid, |v| v == mark.as_bytes()) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        live().insert(mark.clone());
        end_all_now(&[]);
        let kept_while_going_on = exists(&orphan);
        live().remove(&mark);
        end_all_now(&[]);
        until_gone(&orphan);
        let orphan_gone = !exists(&orphan);
        let kept = exists(&embedders);
        for child in [&mut embedders, &mut orphan] {
            let _ = child.kill();
            let _ = child.wait();
        }
        assert!(kept_while_going_on, "its conversation had not ended");
        assert!(orphan_gone, "killed and reaped once its conversation ended");
        assert!(kept, "an unmarked child is left alone");
    }

    #[test]
    fn a_lineage_holds_the_descendants_of_its_leader() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 30 & wait"])
            .spawn()
            .unwrap();
        let pid = i32::try_from(child.id()).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut lineage = Lineage::of(String::new(), pid);
        while lineage.seen.is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
            lineage = Lineage::of(String::new(), pid);
        }
        let grandchildren = children(pid);
        let _ = child.kill();
        for g in &grandchildren {
            signal(*g, false, Signal::KILL);
        }
        let _ = child.wait();
        assert_eq!(grandchildren.len(), 1, "sh started one sleep");
        assert!(lineage.seen.iter().any(|(p, _)| *p == grandchildren[0]));
    }
}
