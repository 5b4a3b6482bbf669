//! What every BACnet benchmark command starts with.

use std::path::PathBuf;

use buildwire_bench::report::MachineInfo;

use crate::progress::ProgressLine;

/// What every scenario starts with: `--plot` checked, the runtime (2 threads), the
/// progress line (hidden with `--json`) and the machine's description.
pub fn scenario_start(
    plot: Option<&PathBuf>,
    json: bool,
) -> Result<(tokio::runtime::Runtime, ProgressLine, MachineInfo), Box<dyn std::error::Error>> {
    if let Some(plot) = plot {
        let ext = plot
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        if !matches!(ext.as_deref(), Some("png" | "svg")) {
            return Err(format!(
                "--plot {}: the chart format comes from the file name; end it in .png or .svg",
                plot.display()
            )
            .into());
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    Ok((runtime, ProgressLine::new(json), MachineInfo::detect()))
}
