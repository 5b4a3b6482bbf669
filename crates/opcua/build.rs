//! Records the build's date for ServerStatus.BuildInfo.BuildDate: `SOURCE_DATE_EPOCH` when set
//! (reproducible builds), else the time this script ran (once per fresh build of the crate).

use std::time::{SystemTime, UNIX_EPOCH};

fn main() {
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
    println!("cargo:rerun-if-changed=build.rs");
    let seconds = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|value| value.trim().parse::<i64>().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |elapsed| i64::try_from(elapsed.as_secs()).unwrap_or(0))
        });
    println!("cargo:rustc-env=BUILDWIRE_OPCUA_BUILD_EPOCH={seconds}");
}
