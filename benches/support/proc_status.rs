//! A Linux process's `/proc/<pid>/status`, read once, for the examples that watch
//! a process's memory (`mcp_memory`, `startup_stages`, `soak`).

/// One reading of `/proc/<pid>/status` (empty where there is none).
pub(crate) struct ProcStatus(String);

impl ProcStatus {
    /// The status of process `pid`: a number, or `"self"`.
    pub(crate) fn of(pid: impl std::fmt::Display) -> ProcStatus {
        ProcStatus(std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default())
    }

    /// The number a field starts with (`"VmRSS"`, `"VmHWM"` in KiB, `"Threads"`),
    /// or 0 when the field is missing.
    pub(crate) fn field(&self, name: &str) -> u64 {
        self.0
            .lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
            .and_then(|value| value.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    }
}
