//! Fuzz target: the parser must never panic or overflow the stack, whatever the bytes; when a
//! file parses cleanly, printing and reparsing it must give the same tree.
#![no_main]

use libfuzzer_sys::fuzz_target;
use moss_syntax::{eq_ignoring_spans, parse_str, print_stored_definition, FileId};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (def, diags) = parse_str(FileId(0), &text);
    if diags.is_empty() {
        let printed = print_stored_definition(&def);
        let (def2, diags2) = parse_str(FileId(0), &printed);
        assert!(diags2.is_empty(), "printed form does not parse:\n{printed}");
        assert!(eq_ignoring_spans(&def, &def2), "round trip changed the tree:\n{printed}");
    }
});
