//! The FMU runtime library is copied into every exported FMU: link it without debug
//! information and static symbols (the dynamic FMI symbols stay), which makes it a fraction
//! of the size. Only the cdylib is affected; the rlib keeps its debug information.

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,--strip-all");
}
