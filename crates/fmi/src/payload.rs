//! What `moss fmu` stores in an FMU's `resources/`: the translated program and the facts of
//! the export that the runtime needs, serialized with postcard (compact, no schema, serde).
//!
//! One prebuilt library serves every model because the model is data: the runtime reads
//! this file at `fmi2Instantiate` and compiles the program with the interpreter.

use moss_symbolic::CausalProgram;
use serde::{Deserialize, Serialize};

/// File name of the payload inside `resources/`.
pub const RESOURCE_FILE: &str = "moss_model.bin";

/// FNV-1a over `bytes`, continuing from `h` (usable in constants).
const fn fnv(bytes: &[u8], mut h: u64) -> u64 {
    let mut i = 0;
    while i < bytes.len() {
        h = (h ^ bytes[i] as u64).wrapping_mul(0x0000_0100_0000_01b3);
        i += 1;
    }
    h
}

/// A hash of the sources of every type that is serialized (the payload, the causal program
/// and the flat types it holds, the FMU state): postcard has no schema, so exporter and
/// runtime must be built from the same definitions. Any change to these files changes it,
/// with no number to remember to bump; an FMU is always self-consistent (it carries its own
/// runtime), only a `moss` binary and a runtime library built from different sources differ.
pub const FINGERPRINT: u64 = {
    let mut h = 0xcbf2_9ce4_8422_2325;
    h = fnv(include_bytes!("payload.rs"), h);
    h = fnv(include_bytes!("instance.rs"), h);
    h = fnv(include_bytes!("../../symbolic/src/program.rs"), h);
    h = fnv(include_bytes!("../../frontend/src/flat.rs"), h);
    h = fnv(include_bytes!("../../syntax/src/source.rs"), h);
    h = fnv(include_bytes!("../../codegen/src/machine.rs"), h);
    h = fnv(include_bytes!("../../codegen/src/string_pool.rs"), h);
    h = fnv(include_bytes!("../../codegen/src/model.rs"), h);
    h = fnv(include_bytes!("../../codegen/src/interp.rs"), h);
    h
};

/// [`FINGERPRINT`] as bytes after a fixed tag, kept in the runtime library so that `moss fmu`
/// can check a library file before packaging it ([`library_matches`]).
pub static MARKER: [u8; 24] = marker();

const fn marker() -> [u8; 24] {
    let tag = *b"moss-fmi-fingerprint";
    let fp = FINGERPRINT.to_le_bytes();
    let mut m = [0u8; 24];
    let mut i = 0;
    while i < 20 {
        m[i] = tag[i];
        i += 1;
    }
    let mut k = 0;
    while k < 4 {
        // the low half suffices to tell builds apart; the tag plus 4 bytes keeps it short
        m[20 + k] = fp[k];
        k += 1;
    }
    m
}

/// The fingerprint this library was built with, read from [`MARKER`] in memory: reading it
/// (rather than using the constant) keeps the marker in the linked library.
fn runtime_fingerprint() -> u32 {
    // SAFETY: reading 4 initialized bytes of a static.
    let low: [u8; 4] =
        unsafe { std::ptr::read_volatile(MARKER[20..24].as_ptr() as *const [u8; 4]) };
    u32::from_le_bytes(low)
}

/// Whether the runtime library `bytes` was built from the same sources as this `moss`.
pub fn library_matches(bytes: &[u8]) -> bool {
    bytes.windows(MARKER.len()).any(|w| w == MARKER)
}

/// What precedes the payload in the file: read first, so that a payload from other sources
/// is refused with a message instead of being misread.
#[derive(Serialize, Deserialize, Debug)]
struct Header {
    fingerprint: u32,
    moss_version: String,
}

#[derive(Serialize, Deserialize, Debug)]
pub struct Payload {
    /// Version of moss that exported the FMU (for messages).
    pub moss_version: String,
    /// The `guid` / `instantiationToken` of modelDescription.xml; `fmi2Instantiate` checks it.
    pub token: String,
    /// Full names of the model's top-level outputs (the program does not record causality).
    pub outputs: Vec<String>,
    /// The interfaces modelDescription.xml declares (`moss fmu --kind`); the runtime
    /// refuses to instantiate another.
    pub model_exchange: bool,
    pub co_simulation: bool,
    pub program: CausalProgram,
}

impl Payload {
    /// A payload for `program`, its token derived from the serialized program so that two
    /// exports of the same model agree and different models differ.
    pub fn new(program: CausalProgram, outputs: Vec<String>) -> Result<Payload, String> {
        let mut payload = Payload {
            moss_version: env!("CARGO_PKG_VERSION").to_string(),
            token: String::new(),
            outputs,
            model_exchange: true,
            co_simulation: true,
            program,
        };
        let bytes = payload.to_bytes()?;
        payload.token = token_of(&bytes);
        Ok(payload)
    }

    /// Declare only the interfaces given (both by default).
    pub fn with_interfaces(mut self, model_exchange: bool, co_simulation: bool) -> Payload {
        self.model_exchange = model_exchange;
        self.co_simulation = co_simulation;
        self
    }

    /// The header, then the payload.
    pub fn to_bytes(&self) -> Result<Vec<u8>, String> {
        let header = Header {
            fingerprint: FINGERPRINT as u32,
            moss_version: self.moss_version.clone(),
        };
        let fail = |e: postcard::Error| format!("cannot serialize the model: {e}");
        let mut bytes = postcard::to_stdvec(&header).map_err(fail)?;
        bytes.extend(postcard::to_stdvec(self).map_err(fail)?);
        Ok(bytes)
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Payload, String> {
        let (header, rest) = postcard::take_from_bytes::<Header>(bytes)
            .map_err(|e| format!("the model file of the FMU is not one moss writes ({e})"))?;
        if header.fingerprint != runtime_fingerprint() {
            return Err(format!(
                "the model stored in the FMU was exported by a moss {} built from other sources \
                 than this runtime library (fingerprint {:08x}, runtime {:08x}); export it again \
                 with the moss this library belongs to",
                header.moss_version,
                header.fingerprint,
                runtime_fingerprint()
            ));
        }
        postcard::from_bytes(rest)
            .map_err(|e| format!("cannot read the model stored in the FMU: {e}"))
    }
}

/// A GUID-shaped token from two FNV-1a hashes of `bytes` (different offsets): stable across
/// platforms and Rust versions, unlike `DefaultHasher`.
fn token_of(bytes: &[u8]) -> String {
    let fnv = |seed: u64| {
        bytes.iter().fold(seed, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        })
    };
    let (a, b) = (fnv(0xcbf2_9ce4_8422_2325), fnv(0x8422_2325_cbf2_9ce4));
    format!(
        "{{{:08x}-{:04x}-{:04x}-{:04x}-{:012x}}}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xffff,
        b >> 48,
        b & 0xffff_ffff_ffff
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_round_trips_and_token_depends_on_program() {
        let mut program = CausalProgram {
            name: "M".into(),
            ..Default::default()
        };
        let a = Payload::new(program.clone(), vec!["y".into()]).expect("serializes");
        let back = Payload::from_bytes(&a.to_bytes().expect("bytes")).expect("reads");
        assert_eq!(back.program.name, "M");
        assert_eq!(back.outputs, vec!["y".to_string()]);
        assert_eq!(back.token, a.token);
        program.name = "N".into();
        let b = Payload::new(program, vec![]).expect("serializes");
        assert_ne!(a.token, b.token);
        assert_eq!(a.token.len(), 38, "{}", a.token);
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let e = Payload::from_bytes(&[1, 2, 3]).expect_err("not a payload");
        assert!(
            e.contains("not one moss writes") || e.contains("other sources"),
            "{e}"
        );
    }

    #[test]
    fn payloads_of_other_sources_are_refused() {
        let p = Payload::new(CausalProgram::default(), vec![]).expect("serializes");
        let mut bytes = p.to_bytes().expect("bytes");
        // the header starts with the fingerprint (a varint): change its first byte
        bytes[0] ^= 0x01;
        let e = Payload::from_bytes(&bytes).expect_err("another fingerprint");
        assert!(e.contains("built from other sources"), "{e}");
    }

    #[test]
    fn the_marker_holds_the_fingerprint() {
        assert!(library_matches(
            &[b"xx".as_slice(), &MARKER, b"yy"].concat()
        ));
        assert!(!library_matches(b"moss-fmi-fingerprint...."));
        assert_eq!(runtime_fingerprint(), FINGERPRINT as u32);
    }
}
