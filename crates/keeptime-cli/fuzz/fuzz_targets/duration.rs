//! Fuzzes the duration parser: no input may panic, and every accepted value
//! must be consistent with what the input says.
//!
//! Run: `cargo +nightly fuzz run duration` (or with `RUSTC_BOOTSTRAP=1` on
//! stable) from `crates/keeptime-cli`.

#![no_main]

use keeptime_cli::duration::{parse_list, parse_ns, parse_ns_default_seconds};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let strict = parse_ns(s);
    let lenient = parse_ns_default_seconds(s);
    if let Ok(ns) = strict {
        // A value with a unit means the same with or without a default unit.
        assert_eq!(lenient, Ok(ns), "{s:?}");
        // Writing it back in whole nanoseconds gives the same value.
        assert_eq!(parse_ns(&format!("{ns}ns")), Ok(ns));
    }
    if let Err(e) = &strict {
        let msg = e.to_string();
        assert!(!msg.is_empty() && !msg.contains('\n'), "{msg:?}");
    }
    let _ = parse_list(s, parse_ns);
});
