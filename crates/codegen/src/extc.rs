//! External C functions with user code (spec 12.9): the functions a model calls through
//! `external "C"` that moss does not run natively are compiled with the system C compiler
//! and loaded as a shared object.
//!
//! All such functions of one program go into one generated C file: the `Include` texts
//! (each distinct text once, in the order first met), an implementation of the
//! `ModelicaUtilities.h` interface, and one wrapper per function with a uniform ABI,
//! `int moss_ext_K(void **a)`: `a[0]` points to the storage of the return value, `a[1..]`
//! to the arguments (a scalar input's value, an output's or array's buffer). The wrapper
//! calls the user function with the argument types of the C mapping (spec 12.9.1: Real
//! `double`, Integer/Boolean/enumeration `int`, String `const char*`, arrays as pointers
//! to their row-major data) and returns 1 when the user code called `ModelicaError`: the
//! error longjmps back to the wrapper, which stores the message, so an error in C code
//! becomes an ordinary simulation error in Rust instead of ending the process.
//!
//! The shared object is compiled with `$CC` (default `cc`), `-shared -fPIC`, `-I` for each
//! `IncludeDirectory` and `-L`/`-l` for `LibraryDirectory`/`Library`, and cached in
//! `$MOSS_CACHE_DIR` (default `$XDG_CACHE_HOME/moss` or `~/.cache/moss`, else the temporary
//! directory) under a hash of the source and the command, so a model compiles its C code
//! once. Files are written under a unique name and renamed, so parallel runs share the
//! cache safely. A missing compiler, a compile error or an unresolved symbol leaves every
//! function of the program with a message that is reported only if one is called.

use crate::func::{FExpr, Ty};
use moss_frontend::flat::ExternalCode;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

/// The C type of a scalar or of the elements of an array argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CType {
    Double,
    Int,
    Str,
    /// An external object's handle (held by moss as an Integer).
    Ptr,
}

impl CType {
    fn name(self) -> &'static str {
        match self {
            CType::Double => "double",
            CType::Int => "int",
            CType::Str => "const char*",
            CType::Ptr => "void*",
        }
    }
}

/// One argument of the external call.
#[derive(Clone, Debug)]
pub enum CArg {
    /// A value computed from the inputs (an expression, a size); arrays pass their data.
    In { expr: FExpr, ty: CType, array: bool },
    /// An output or local passed by pointer (a scalar output, or any array of the function
    /// body): the buffer starts with the variable's value (frame slot `slot`, of type
    /// `slot_ty`) and is written back.
    Out { slot: u32, slot_ty: Ty, ty: CType },
}

/// The compiled call of one external C function.
#[derive(Clone, Debug)]
pub struct CCall {
    /// The C name of the called function.
    pub c_name: String,
    pub args: Vec<CArg>,
    /// The frame slot taking the return value, its type there and its C type.
    pub ret: Option<(u32, Ty, CType)>,
    /// The code (includes, directories, libraries) the call needs.
    pub code: ExternalCode,
    /// The loaded wrapper, or why there is none (set by [`link`]).
    pub entry: Result<Entry, String>,
    /// For a constructor of external objects (it returns a handle): the objects built so
    /// far by their argument values, so that each distinct object is constructed once.
    pub objects: Arc<Mutex<Vec<(String, i64)>>>,
}

/// A wrapper function in a loaded shared object.
#[derive(Clone)]
pub struct Entry {
    lib: Arc<Loaded>,
    wrapper: unsafe extern "C" fn(*mut *mut c_void) -> c_int,
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Entry({})", self.lib.path.display())
    }
}

struct Loaded {
    lib: libloading::Library,
    path: PathBuf,
}

/// Storage of one argument during a call; the pointer in `a[k]` points into it.
pub enum Buffer {
    Double(Vec<f64>),
    Int(Vec<c_int>),
    /// The strings (owned, kept alive during the call) and the pointers passed.
    Str(Vec<CString>, Vec<*const c_char>),
    Ptr(Vec<*mut c_void>),
}

impl Buffer {
    fn ptr(&mut self) -> *mut c_void {
        match self {
            Buffer::Double(v) => v.as_mut_ptr() as *mut c_void,
            Buffer::Int(v) => v.as_mut_ptr() as *mut c_void,
            Buffer::Ptr(v) => v.as_mut_ptr() as *mut c_void,
            Buffer::Str(owned, p) => {
                debug_assert!(owned.len() <= p.len());
                p.as_mut_ptr() as *mut c_void
            }
        }
    }
}

impl Entry {
    /// Call the wrapper with the buffers (return value first); the C strings the function
    /// returned or allocated are valid until [`Entry::release`].
    pub fn call(&self, bufs: &mut [Buffer]) -> Result<(), String> {
        let mut ptrs: Vec<*mut c_void> = bufs.iter_mut().map(Buffer::ptr).collect();
        // SAFETY: the wrapper was generated for exactly this argument list: `ptrs[k]`
        // points to a buffer of the C type and length the wrapper reads or writes.
        let rc = unsafe { (self.wrapper)(ptrs.as_mut_ptr()) };
        if rc == 0 {
            return Ok(());
        }
        Err(self.last_error())
    }

    fn last_error(&self) -> String {
        // SAFETY: `moss_ext_error` is defined by the generated file and returns a
        // NUL-terminated thread-local buffer.
        unsafe {
            match self
                .lib
                .lib
                .get::<unsafe extern "C" fn() -> *const c_char>(b"moss_ext_error\0")
            {
                Ok(f) => CStr::from_ptr(f()).to_string_lossy().trim_end().to_string(),
                Err(e) => e.to_string(),
            }
        }
    }

    /// Free the strings `ModelicaAllocateString` handed out during the last call.
    pub fn release(&self) {
        // SAFETY: defined by the generated file; frees only its own allocations.
        unsafe {
            if let Ok(f) = self
                .lib
                .lib
                .get::<unsafe extern "C" fn()>(b"moss_ext_release\0")
            {
                f();
            }
        }
    }
}

/// Read a C string returned or written by external code.
pub fn c_string(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: external code returns NUL-terminated strings (spec 12.9.1.2).
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// Compile and load the external calls of a program and fill their `entry`.
pub fn link(calls: &mut [&mut CCall]) {
    if calls.is_empty() {
        return;
    }
    let source = generate(calls);
    let result = build(&source, calls).and_then(|path| load(&path));
    for (k, c) in calls.iter_mut().enumerate() {
        c.entry = match &result {
            Ok(lib) => {
                let name = format!("moss_ext_{k}\0");
                // SAFETY: the symbol is a wrapper generated with exactly this signature.
                unsafe {
                    lib.lib
                        .get::<unsafe extern "C" fn(*mut *mut c_void) -> c_int>(name.as_bytes())
                }
                .map(|s| Entry {
                    lib: lib.clone(),
                    wrapper: *s,
                })
                .map_err(|e| format!("cannot find the wrapper of `{}`: {e}", c.c_name))
            }
            Err(e) => Err(e.clone()),
        };
    }
}

/// The C file: runtime support, the distinct `Include` texts, one wrapper per call.
fn generate(calls: &[&mut CCall]) -> String {
    let mut s = String::from(RUNTIME);
    let mut seen = std::collections::HashSet::new();
    for c in calls {
        for inc in &c.code.includes {
            if seen.insert(inc.as_str()) {
                s.push_str(inc);
                s.push('\n');
            }
        }
    }
    for (k, c) in calls.iter().enumerate() {
        if c.code.includes.is_empty() {
            // Only a library defines the function: declare it by the C mapping.
            let _ = writeln!(s, "{};", prototype(c));
        }
        let _ = writeln!(s, "{}", wrapper(k, c));
    }
    s
}

/// `double f(double, int*, ...)` from the argument types.
fn prototype(c: &CCall) -> String {
    let ret = c.ret.map(|(_, _, t)| t.name()).unwrap_or("void");
    let args: Vec<String> = c
        .args
        .iter()
        .map(|a| match a {
            CArg::In {
                ty, array: false, ..
            } => ty.name().to_string(),
            CArg::In { ty, .. } => format!("{}*", ty.name()),
            CArg::Out { ty, .. } => format!("{}*", ty.name()),
        })
        .collect();
    let args = if args.is_empty() {
        "void".to_string()
    } else {
        args.join(", ")
    };
    format!("extern {ret} {}({args})", c.c_name)
}

fn wrapper(k: usize, c: &CCall) -> String {
    let args: Vec<String> = c
        .args
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let i = i + 1;
            match a {
                CArg::In {
                    ty, array: false, ..
                } => format!("*({}*)a[{i}]", ty.name()),
                CArg::In { ty, .. } | CArg::Out { ty, .. } => format!("({}*)a[{i}]", ty.name()),
            }
        })
        .collect();
    let call = format!("{}({})", c.c_name, args.join(", "));
    let stmt = match c.ret {
        Some((_, _, t)) => format!("*({}*)a[0] = {call};", t.name()),
        None => format!("{call};"),
    };
    format!(
        "int moss_ext_{k}(void **a) {{\n  jmp_buf env; jmp_buf *prev = moss_jmp;\n  moss_jmp = &env;\n  \
         if (setjmp(env)) {{ moss_jmp = prev; return 1; }}\n  {stmt}\n  moss_jmp = prev;\n  return 0;\n}}"
    )
}

/// The C compiler: `$CC`, else `cc`.
fn compiler() -> String {
    std::env::var("CC")
        .ok()
        .filter(|c| !c.trim().is_empty())
        .unwrap_or_else(|| "cc".into())
}

/// Where compiled shared objects are kept.
fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("MOSS_CACHE_DIR") {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(d).join("moss");
    }
    if let Some(h) = std::env::var_os("HOME") {
        return PathBuf::from(h).join(".cache").join("moss");
    }
    std::env::temp_dir().join("moss-cache")
}

/// FNV-1a: a hash that stays the same across runs and builds (the cache key).
fn fnv1a(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes().chain([0u8]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// Write `text` to `path` through a uniquely named file and a rename, so a concurrent
/// reader never sees half a file.
fn write_atomic(path: &Path, text: &[u8]) -> Result<(), String> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, text)
        .and_then(|_| std::fs::rename(&tmp, path))
        .map_err(|e| format!("cannot write `{}`: {e}", path.display()))
}

/// The compiler's arguments besides input and output.
fn flags(calls: &[&mut CCall], include: &Path) -> Vec<String> {
    let mut f = vec![
        "-shared".to_string(),
        "-fPIC".into(),
        "-O1".into(),
        format!("-I{}", include.display()),
    ];
    let mut push = |x: String| {
        if !f.contains(&x) {
            f.push(x);
        }
    };
    for c in calls {
        c.code
            .include_dirs
            .iter()
            .for_each(|d| push(format!("-I{d}")));
    }
    for c in calls {
        c.code
            .library_dirs
            .iter()
            .for_each(|d| push(format!("-L{d}")));
    }
    for c in calls {
        c.code.libraries.iter().for_each(|l| push(format!("-l{l}")));
    }
    // Unresolved symbols (a misspelt function name) are a link error here, not a crash
    // when the function is first called.
    if cfg!(target_os = "linux") {
        push("-Wl,-z,defs".into());
    }
    push("-lm".into());
    f
}

/// Compile `source` unless the cache has it; the path of the shared object.
fn build(source: &str, calls: &[&mut CCall]) -> Result<PathBuf, String> {
    let cc = compiler();
    let dir = cache_dir().join("extc");
    std::fs::create_dir_all(&dir).map_err(|e| {
        format!(
            "cannot create the cache directory `{}` for compiled external C code: {e} \
             (set MOSS_CACHE_DIR to a writable directory)",
            dir.display()
        )
    })?;
    let include = dir.join("include");
    std::fs::create_dir_all(&include).map_err(|e| e.to_string())?;
    let header = include.join("ModelicaUtilities.h");
    if std::fs::read_to_string(&header).ok().as_deref() != Some(UTILITIES_H) {
        write_atomic(&header, UTILITIES_H.as_bytes())?;
    }
    let fl = flags(calls, &include);
    let mut key: Vec<&str> = vec![source, &cc];
    key.extend(fl.iter().map(String::as_str));
    let stem = format!("m{:016x}", fnv1a(&key));
    let so = dir.join(format!("{stem}.so"));
    if so.is_file() {
        return Ok(so);
    }
    let c_file = dir.join(format!("{stem}.c"));
    write_atomic(&c_file, source.as_bytes())?;
    let tmp_so = dir.join(format!("{stem}.so.tmp{}", std::process::id()));
    let out = Command::new(&cc)
        .arg(&c_file)
        .arg("-o")
        .arg(&tmp_so)
        .args(&fl)
        .output()
        .map_err(|e| {
            format!(
                "moss compiles external C code with the system C compiler, but `{cc}` could \
                 not be run ({e}); install a C compiler (e.g. `apt-get install gcc`) or set \
                 the CC environment variable to one"
            )
        })?;
    if !out.status.success() {
        let _ = std::fs::remove_file(&tmp_so);
        let msg = String::from_utf8_lossy(&out.stderr);
        // the errors matter; warnings about the user's code would hide them
        let errors: Vec<&str> = msg
            .lines()
            .filter(|l| l.contains("error") || l.contains("undefined reference"))
            .take(20)
            .collect();
        let msg: Vec<&str> = if errors.is_empty() {
            msg.lines().take(30).collect()
        } else {
            errors
        };
        return Err(format!(
            "the external C code does not compile (`{cc}` on `{}`):\n{}",
            c_file.display(),
            msg.join("\n")
        ));
    }
    std::fs::rename(&tmp_so, &so).map_err(|e| format!("cannot write `{}`: {e}", so.display()))?;
    Ok(so)
}

fn load(path: &Path) -> Result<Arc<Loaded>, String> {
    // SAFETY: the library is the one just compiled from generated code; its initializers
    // are those of the user's C code, which the model asks to run.
    let lib = unsafe { libloading::Library::new(path) }
        .map_err(|e| format!("cannot load the compiled external C code: {e}"))?;
    Ok(Arc::new(Loaded {
        lib,
        path: path.to_path_buf(),
    }))
}

/// The `ModelicaUtilities.h` interface (spec 12.9.6) as the generated file implements it.
const UTILITIES_H: &str = r#"#ifndef MODELICA_UTILITIES_H
#define MODELICA_UTILITIES_H
#include <stddef.h>
#include <stdarg.h>
#if defined(__GNUC__)
#define MODELICA_NORETURN __attribute__((noreturn))
#define MODELICA_FORMATATTR_PRINTF __attribute__((format(printf, 1, 2)))
#define MODELICA_FORMATATTR_VPRINTF __attribute__((format(printf, 1, 0)))
#else
#define MODELICA_NORETURN
#define MODELICA_FORMATATTR_PRINTF
#define MODELICA_FORMATATTR_VPRINTF
#endif
void ModelicaMessage(const char *string);
void ModelicaFormatMessage(const char *string, ...) MODELICA_FORMATATTR_PRINTF;
void ModelicaVFormatMessage(const char *string, va_list args) MODELICA_FORMATATTR_VPRINTF;
void ModelicaWarning(const char *string);
void ModelicaFormatWarning(const char *string, ...) MODELICA_FORMATATTR_PRINTF;
void ModelicaVFormatWarning(const char *string, va_list args) MODELICA_FORMATATTR_VPRINTF;
MODELICA_NORETURN void ModelicaError(const char *string);
MODELICA_NORETURN void ModelicaFormatError(const char *string, ...) MODELICA_FORMATATTR_PRINTF;
MODELICA_NORETURN void ModelicaVFormatError(const char *string, va_list args) MODELICA_FORMATATTR_VPRINTF;
char* ModelicaAllocateString(size_t len);
char* ModelicaAllocateStringWithErrorReturn(size_t len);
char* ModelicaDuplicateString(const char *str);
char* ModelicaDuplicateStringWithErrorReturn(const char *str);
#endif
"#;

/// Runtime part of the generated file: the `ModelicaUtilities.h` functions. Errors jump
/// back to the innermost wrapper; strings are freed after the call has been read.
const RUNTIME: &str = r#"#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ModelicaUtilities.h"

static __thread jmp_buf *moss_jmp = 0;
static __thread char moss_msg[4096];
struct moss_str { struct moss_str *next; };
static __thread struct moss_str *moss_strings = 0;

const char* moss_ext_error(void) { return moss_msg; }

void moss_ext_release(void) {
  while (moss_strings) { struct moss_str *n = moss_strings->next; free(moss_strings); moss_strings = n; }
}

void ModelicaVFormatMessage(const char *string, va_list args) { vfprintf(stderr, string, args); fflush(stderr); }
void ModelicaFormatMessage(const char *string, ...) { va_list a; va_start(a, string); ModelicaVFormatMessage(string, a); va_end(a); }
void ModelicaMessage(const char *string) { ModelicaFormatMessage("%s", string); }
void ModelicaVFormatWarning(const char *string, va_list args) { fputs("warning: ", stderr); ModelicaVFormatMessage(string, args); }
void ModelicaFormatWarning(const char *string, ...) { va_list a; va_start(a, string); ModelicaVFormatWarning(string, a); va_end(a); }
void ModelicaWarning(const char *string) { ModelicaFormatWarning("%s", string); }

void ModelicaVFormatError(const char *string, va_list args) {
  vsnprintf(moss_msg, sizeof moss_msg, string, args);
  if (moss_jmp) longjmp(*moss_jmp, 1);
  fprintf(stderr, "error: %s\n", moss_msg);
  exit(1);
}
void ModelicaFormatError(const char *string, ...) { va_list a; va_start(a, string); ModelicaVFormatError(string, a); va_end(a); }
void ModelicaError(const char *string) { ModelicaFormatError("%s", string); }

char* ModelicaAllocateStringWithErrorReturn(size_t len) {
  struct moss_str *s = (struct moss_str*)malloc(sizeof(struct moss_str) + len + 1);
  if (!s) return 0;
  s->next = moss_strings; moss_strings = s;
  char *p = (char*)(s + 1); p[len] = 0;
  return p;
}
char* ModelicaAllocateString(size_t len) {
  char *p = ModelicaAllocateStringWithErrorReturn(len);
  if (!p) ModelicaError("ModelicaAllocateString: out of memory");
  return p;
}
char* ModelicaDuplicateStringWithErrorReturn(const char *str) {
  size_t n = strlen(str); char *p = ModelicaAllocateStringWithErrorReturn(n);
  if (p) memcpy(p, str, n + 1);
  return p;
}
char* ModelicaDuplicateString(const char *str) {
  char *p = ModelicaDuplicateStringWithErrorReturn(str);
  if (!p) ModelicaError("ModelicaDuplicateString: out of memory");
  return p;
}
"#;
