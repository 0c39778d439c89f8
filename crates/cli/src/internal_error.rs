//! A panic anywhere in moss is a bug of moss, not of the model: the user gets one clear line
//! asking for a report and exit status 1, instead of Rust's "thread 'main' panicked" text and
//! status 101. With `RUST_BACKTRACE` set, Rust's own report (with the backtrace) is printed
//! as well, for whoever debugs it.

use std::panic::{self, AssertUnwindSafe};
use std::sync::Mutex;

/// The message and location of the first panic, recorded by the hook: the payload that
/// `catch_unwind` gives back has no location.
static FIRST_PANIC: Mutex<Option<String>> = Mutex::new(None);

/// Environment variable that makes `moss` panic on purpose after parsing its arguments, so
/// that tests can check this report end to end (no model reaches a panic on purpose).
pub const PANIC_FOR_TEST: &str = "MOSS_TEST_INTERNAL_ERROR";

/// Run `f` (a subcommand) and turn a panic into the "internal error" report and exit code.
pub fn guard(f: impl FnOnce() -> u8) -> u8 {
    install_hook();
    match panic::catch_unwind(AssertUnwindSafe(|| {
        if std::env::var_os(PANIC_FOR_TEST).is_some() {
            panic!("panic requested by {PANIC_FOR_TEST}");
        }
        f()
    })) {
        Ok(code) => code,
        Err(_) => {
            let what = FIRST_PANIC
                .lock()
                .ok()
                .and_then(|mut p| p.take())
                .unwrap_or_else(|| "a panic without a message".to_string());
            eprintln!("error: internal error in moss (please report): {what}");
            eprintln!(
                "   = help: this is a bug of moss, not of the model; please report it with the \
                 model and the command (set RUST_BACKTRACE=1 for a backtrace)"
            );
            crate::commands::EXIT_MODEL_ERROR
        }
    }
}

/// Record the first panic's message and location instead of printing Rust's report (unless
/// a backtrace was asked for). Panics that a stage catches itself (the symbolic stage turns
/// one on its thread into an "internal error" diagnostic) are recorded too, harmlessly.
fn install_hook() {
    let backtrace = std::env::var_os("RUST_BACKTRACE").is_some_and(|v| v != "0");
    let default = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_string());
        let at = info
            .location()
            .map(|l| format!(" (at {}:{})", l.file(), l.line()))
            .unwrap_or_default();
        if let Ok(mut first) = FIRST_PANIC.lock() {
            first.get_or_insert(format!("{message}{at}"));
        }
        if backtrace {
            default(info);
        }
    }));
}
