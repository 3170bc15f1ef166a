//! Gives libkeeptime.so its SONAME, so programs linked against it record
//! `libkeeptime.so.0` and keep working across compatible upgrades.

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if os == "linux" || os == "android" || os.ends_with("bsd") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libkeeptime.so.0");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
