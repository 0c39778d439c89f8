//! The annotation of an external clause (spec 12.9.4): `Include`, `IncludeDirectory`,
//! `Library` and `LibraryDirectory`, read into [`ExternalCode`] with `modelica://` URIs
//! resolved against the library roots. `moss-codegen` compiles user C code from it
//! (`extc.rs` there); this stage only collects what the text says, so that the flat model
//! is self-contained (no later stage needs the loader).

use crate::ctx::Flattener;
use crate::flat::ExternalCode;
use crate::inst::{err, Res};
use moss_syntax::ast::{self, ExprKind};

impl Flattener<'_> {
    /// The code an external clause of function `fname` needs. The default directories of
    /// the function's top-level library (`modelica://Top/Resources/Include` and
    /// `.../Resources/Library`, spec 12.9.4) are added when they exist.
    pub(crate) fn external_code(&self, ext: &ast::External, fname: &str) -> Res<ExternalCode> {
        let mut code = ExternalCode::default();
        let top = fname.split('.').next().unwrap_or(fname);
        let mut include_dir_given = false;
        let mut library_dir_given = false;
        if let Some(ann) = &ext.annotation {
            for a in &ann.modification.args {
                let ast::Argument::Modification(m) = a else {
                    continue;
                };
                let key = m.name.parts.last().map(|p| p.as_str()).unwrap_or("");
                let Some(binding) = m.modification.as_ref().and_then(|x| x.binding.as_ref()) else {
                    continue;
                };
                let target = match key {
                    "Include" => &mut code.includes,
                    "IncludeDirectory" => {
                        include_dir_given = true;
                        &mut code.include_dirs
                    }
                    "Library" => &mut code.libraries,
                    "LibraryDirectory" => {
                        library_dir_given = true;
                        &mut code.library_dirs
                    }
                    _ => continue,
                };
                let texts = annotation_strings(&binding.expr, key)?;
                let is_dir = key.ends_with("Directory");
                for t in texts {
                    target.push(if is_dir { self.resolve_dir(&t) } else { t });
                }
            }
        }
        if !include_dir_given {
            code.include_dirs
                .push(self.resolve_dir(&format!("modelica://{top}/Resources/Include")));
        }
        if !library_dir_given {
            code.library_dirs
                .push(self.resolve_dir(&format!("modelica://{top}/Resources/Library")));
        }
        // A directory that does not exist cannot help the C compiler; dropping it keeps the
        // generated command (and its cache key) independent of absent defaults.
        code.include_dirs
            .retain(|d| std::path::Path::new(d).is_dir());
        code.library_dirs
            .retain(|d| std::path::Path::new(d).is_dir());
        Ok(code)
    }

    /// A directory named by a `modelica://` URI, a `file://` URI or a plain path.
    fn resolve_dir(&self, uri: &str) -> String {
        if let Some(p) = self.lib().resource_path(uri) {
            return p.to_string_lossy().into_owned();
        }
        uri.strip_prefix("file://").unwrap_or(uri).to_string()
    }
}

/// The string or array of strings an annotation entry is bound to.
fn annotation_strings(e: &ast::Expr, key: &str) -> Res<Vec<String>> {
    match &e.kind {
        ExprKind::String(s) => Ok(vec![s.clone()]),
        ExprKind::Array(items) => {
            let mut out = Vec::new();
            for i in items {
                out.extend(annotation_strings(i, key)?);
            }
            Ok(out)
        }
        ExprKind::Binary {
            op: ast::BinaryOp::Add,
            lhs,
            rhs,
        } => {
            // "a" + "b": string concatenation of literals
            let l = annotation_strings(lhs, key)?;
            let r = annotation_strings(rhs, key)?;
            match (l.as_slice(), r.as_slice()) {
                ([a], [b]) => Ok(vec![format!("{a}{b}")]),
                _ => err(
                    e.span,
                    format!("`{key}` must be a string or an array of strings"),
                ),
            }
        }
        _ => err(
            e.span,
            format!("`{key}` of an external clause must be a string literal or an array of them"),
        ),
    }
}
