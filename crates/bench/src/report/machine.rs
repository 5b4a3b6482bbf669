//! A description of the machine a benchmark ran on, read from /proc where available.

use serde::{Deserialize, Serialize};

/// CPU, core count, memory and kernel, as printed beside every result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MachineInfo {
    /// CPU model name (`model name` in /proc/cpuinfo), or `unknown`.
    pub cpu: String,
    /// Logical CPUs available to this process.
    pub cores: usize,
    /// Total memory in MiB, 0 when unknown.
    pub memory_mib: u64,
    /// Operating system and kernel release.
    pub os: String,
}

impl MachineInfo {
    /// Reads the description of the current machine.
    pub fn detect() -> Self {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
        Self {
            cpu: cpu_model(&cpuinfo).unwrap_or_else(|| "unknown".to_owned()),
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            memory_mib: mem_total_mib(&meminfo).unwrap_or(0),
            os: format!("{} {}", std::env::consts::OS, kernel.trim()),
        }
    }

    /// One line for the head of a human report.
    pub fn one_line(&self) -> String {
        format!(
            "{} | {} cores | {} MiB | {}",
            self.cpu, self.cores, self.memory_mib, self.os
        )
    }
}

fn cpu_model(cpuinfo: &str) -> Option<String> {
    cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_owned())
}

fn mem_total_mib(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_files() {
        let cpu = "processor\t: 0\nmodel name\t: AMD EPYC 7B13\nflags\t: fpu\n";
        assert_eq!(cpu_model(cpu).as_deref(), Some("AMD EPYC 7B13"));
        let mem = "MemTotal:       24576000 kB\nMemFree: 1 kB\n";
        assert_eq!(mem_total_mib(mem), Some(24000));
        assert_eq!(mem_total_mib("garbage"), None);
    }

    #[test]
    fn detects_this_machine() {
        let m = MachineInfo::detect();
        assert!(m.cores >= 1);
        assert!(!m.os.is_empty());
    }
}
