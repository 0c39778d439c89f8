//! What `moss fmu` stores in an FMU's `resources/`: the translated program and the facts of
//! the export that the runtime needs, serialized with postcard (compact, no schema, serde).
//!
//! One prebuilt library serves every model because the model is data: the runtime reads
//! this file at `fmi2Instantiate` and compiles the program with the interpreter.

use moss_symbolic::CausalProgram;
use serde::{Deserialize, Serialize};

/// File name of the payload inside `resources/`.
pub const RESOURCE_FILE: &str = "moss_model.bin";

/// Bumped whenever the layout of [`Payload`] or of the program changes incompatibly: a
/// runtime refuses payloads of another format instead of misreading them.
pub const FORMAT: u32 = 1;

#[derive(Serialize, Deserialize, Debug)]
pub struct Payload {
    pub format: u32,
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
            format: FORMAT,
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

    pub fn to_bytes(&self) -> Result<Vec<u8>, String> {
        postcard::to_stdvec(self).map_err(|e| format!("cannot serialize the model: {e}"))
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Payload, String> {
        let payload: Payload = postcard::from_bytes(bytes).map_err(|e| {
            format!("cannot read the model stored in the FMU ({e}); was it exported by another version of moss?")
        })?;
        if payload.format != FORMAT {
            return Err(format!(
                "the model stored in the FMU has format {} (exported by moss {}), this runtime reads format {FORMAT}",
                payload.format, payload.moss_version
            ));
        }
        Ok(payload)
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
        assert!(e.contains("cannot read"), "{e}");
    }
}
