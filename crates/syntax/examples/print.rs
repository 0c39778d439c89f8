//! Parse one Modelica file and print it back (normalised): `cargo run -p moss-syntax
//! --example print -- FILE.mo`. Handy for checking the pretty-printer by eye.

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: print FILE.mo");
        std::process::exit(2);
    };
    let sources = moss_syntax::SourceMap::new();
    let (def, diags) = moss_syntax::parse_file(&sources, std::path::Path::new(&path));
    eprint!("{}", moss_syntax::diag::render_all(&diags, &sources));
    print!("{}", moss_syntax::print_stored_definition(&def));
}
