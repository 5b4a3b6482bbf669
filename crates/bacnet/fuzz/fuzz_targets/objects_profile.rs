//! Fuzz target: JSON device profiles. Parsing arbitrary text never panics; a profile that
//! parses builds a database (or reports which object clashes) and survives a
//! to-JSON/from-JSON round trip unchanged.
#![no_main]

use buildwire_bacnet::objects::profile::DeviceProfile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(profile) = DeviceProfile::from_json(text) {
        let _ = profile.build();
        let again = DeviceProfile::from_json(&profile.to_json()).expect("written JSON parses");
        assert_eq!(again, profile);
    }
});
