//! Declares the `loom` cfg, under which the thread machinery's model checks build
//! (`threads/loom_models.rs`), so that rustc's check of cfg names knows it.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(loom)");
    println!("cargo::rerun-if-changed=build.rs");
}
