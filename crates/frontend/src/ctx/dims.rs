//! Dimensions of components: declaration and type subscripts evaluated, `:` taken from the
//! binding (or an enclosing record's binding), and the presence of conditional components.

use super::*;

impl<'a> Flattener<'a> {
    /// Dimensions of a component (declaration subscripts, then type subscripts), evaluated.
    pub fn comp_dims(&self, node: &NodeRef, comp: &Rc<Comp>) -> Res<Vec<usize>> {
        if let Some(d) = comp.dims.get() {
            return Ok(d.clone());
        }
        let ty = self.comp_type(node, comp)?;
        let mut subs: Vec<(ast::Subscript, Env)> = Vec::new();
        for s in comp.decl.subscripts.iter().chain(comp.type_subs.iter()) {
            subs.push((s.clone(), comp.env.clone()));
        }
        subs.extend(ty.dims.iter().cloned());
        let mut dims = Vec::new();
        let mut colon_positions = Vec::new();
        for (i, (s, env)) in subs.iter().enumerate() {
            match s {
                ast::Subscript::Colon(_) => {
                    colon_positions.push(i);
                    dims.push(0);
                }
                ast::Subscript::Expr(e) => {
                    let v = self.eval_expr(e, env, &mut Cx::eval())?;
                    dims.push(self.dim_size(&v, e.span)?);
                }
            }
        }
        if dims
            .iter()
            .try_fold(1usize, |acc, d| acc.checked_mul(*d))
            .is_none_or(|n| n > MAX_ELEMENTS)
        {
            return err(
                comp.decl.name.span,
                format!(
                    "`{}` has more than {MAX_ELEMENTS} elements; moss expands arrays element by element",
                    comp.name
                ),
            );
        }
        if !colon_positions.is_empty() {
            // A field of a record bound as a whole (`cell(cellData = data)`) takes its value,
            // hence its size, from that binding, not from its own declaration.
            if let Some(shape) = self.field_shape_from_record_binding(node, comp)? {
                for p in colon_positions {
                    dims[p] = shape.get(p).copied().unwrap_or(0);
                }
                let _ = comp.dims.set(dims.clone());
                return Ok(dims);
            }
            // `:` dimensions come from the binding (or, for a parameter without one, from
            // its start value, which is then also its value).
            let start = comp.mods.sub("start").and_then(|m| m.binding.as_ref());
            let Some(b) = comp.mods.binding.as_ref().or(start) else {
                return err(
                    comp.decl.name.span,
                    format!(
                        "the size of `{}` is given as `:` but it has no binding to take it from",
                        comp.name
                    ),
                );
            };
            let v = self.expand(&b.expr, &b.env, &mut Cx::flat())?;
            let v = v.index_path(&b.index);
            let mut shape = v.shape();
            if shape.contains(&0) && b.index.is_empty() {
                // an empty array keeps no inner sizes: `fill(0.0, 0, 2)` has them in its call
                if let Some(s) = self.constructor_shape(&b.expr, &b.env) {
                    shape = s;
                }
            }
            for p in colon_positions {
                dims[p] = shape.get(p).copied().unwrap_or(0);
            }
        }
        let _ = comp.dims.set(dims.clone());
        Ok(dims)
    }

    /// The shape `fill(v, d1, d2, ...)`, `zeros(d1, ...)` or `ones(d1, ...)` construct (a
    /// scalar `v`), with sizes known now; `None` for other expressions.
    fn constructor_shape(&self, e: &ast::Expr, env: &Env) -> Option<Vec<usize>> {
        let ast::ExprKind::Call {
            function,
            args: ast::FunctionArgs::List { positional, named },
        } = &e.kind
        else {
            return None;
        };
        let [part] = &function.parts[..] else {
            return None;
        };
        let sizes = match part.name.as_str() {
            "fill" if positional.len() >= 2 => &positional[1..],
            "zeros" | "ones" if !positional.is_empty() => &positional[..],
            _ => return None,
        };
        if !named.is_empty() || function.global || !part.subscripts.is_empty() {
            return None;
        }
        if part.name.as_str() == "fill"
            && !matches!(
                self.expand(&positional[0], env, &mut Cx::flat()),
                Ok(Val::S(_))
            )
        {
            return None;
        }
        sizes
            .iter()
            .map(|d| {
                let v = self.eval_expr(d, env, &mut Cx::eval()).ok()?;
                self.dim_size(&v, d.span).ok()
            })
            .collect()
    }

    /// The shape of field `comp` of the record instance `node` when `node` is bound as a
    /// whole to another record instance (`r = other`): the shape of `other.<field>`.
    /// Whether record instance `node`, or a record instance it is a field of, is bound as a
    /// whole (its fields then take their values from that binding, not their defaults).
    pub fn bound_as_whole(&self, node: &NodeRef) -> bool {
        let mut cur = node.clone();
        loop {
            if cur.mods.binding.is_some() {
                return true;
            }
            let Some(parent) = cur.parent.clone() else {
                return false;
            };
            if !self.is_record_class(cur.class) || !self.is_record_class(parent.class) {
                return false;
            }
            cur = parent;
        }
    }

    /// The outermost record instance, `node` or one `node` is a field of, bound as a whole
    /// (`stack(data = d)` binds `stack.data.cell[1].table` through `d`, whatever the
    /// declaration of `cell` says): its binding and the path (names and 1-based indices)
    /// from it down to `node`.
    pub fn outermost_record_binding(&self, node: &NodeRef) -> Option<(BindingMod, FieldPath)> {
        let mut below: Vec<(String, Vec<usize>)> = Vec::new();
        let mut found: Option<(BindingMod, usize)> = None;
        let mut cur = node.clone();
        loop {
            if let Some(b) = cur.mods.binding.as_ref() {
                found = Some((b.clone(), below.len()));
            }
            let Some(parent) = cur.parent.clone() else {
                break;
            };
            if !self.is_record_class(cur.class) || !self.is_record_class(parent.class) {
                break;
            }
            let seg = cur.path.rsplit('.').next().unwrap_or(&cur.path);
            let (name, idx) = match seg.split_once('[') {
                Some((n, rest)) => (
                    n,
                    rest.trim_end_matches(']')
                        .split(',')
                        .filter_map(|x| x.trim().parse::<usize>().ok())
                        .collect(),
                ),
                None => (seg, Vec::new()),
            };
            below.push((name.to_string(), idx));
            cur = parent;
        }
        let (b, depth) = found?;
        below.truncate(depth);
        below.reverse();
        Some((b, below))
    }

    fn field_shape_from_record_binding(
        &self,
        node: &NodeRef,
        comp: &Rc<Comp>,
    ) -> Res<Option<Vec<usize>>> {
        if node
            .mods
            .sub(&comp.name)
            .is_some_and(|m| m.binding.is_some())
        {
            return Ok(None);
        }
        let Some((b, below)) = self.outermost_record_binding(node) else {
            return Ok(None);
        };
        if let (ast::ExprKind::Ref(cref), true) = (&b.expr.kind, below.is_empty()) {
            let mut field = cref.clone();
            field.parts.push(ast::RefPart {
                name: comp.decl.name.clone(),
                subscripts: Vec::new(),
            });
            let expr = ast::Expr::new(ast::ExprKind::Ref(field), b.expr.span);
            return match self.expand(&expr, &b.env, &mut Cx::flat()) {
                Ok(v) => Ok(Some(v.index_path(&b.index).shape())),
                Err(_) => Ok(None),
            };
        }
        // Any other record expression (a constructor, an if-expression choosing between
        // records, an array of them): the field of its value, computed now when the
        // branches' fields differ in size.
        let value = match self.expand(&b.expr, &b.env, &mut Cx::flat()) {
            Ok(v) => Some(v),
            Err(_) => self.eval_expr(&b.expr, &b.env, &mut Cx::eval()).ok(),
        };
        let Some(mut v) = value.map(|v| v.index_path(&b.index)) else {
            return Ok(None);
        };
        for (name, idx) in &below {
            let Some(f) = crate::records::field_value(&v, name) else {
                return Ok(None);
            };
            let path: Vec<usize> = idx.iter().map(|i| i.saturating_sub(1)).collect();
            v = f.index_path(&path);
        }
        Ok(crate::records::field_value(&v, &comp.name).map(|f| f.shape()))
    }

    fn dim_size(&self, v: &Val, span: Span) -> Res<usize> {
        match v {
            Val::S(Expr::Integer(n)) if *n >= 0 => Ok(*n as usize),
            Val::S(Expr::Real(r)) if *r >= 0.0 && r.fract() == 0.0 => Ok(*r as usize),
            // `Real x[E]` / `x[Boolean]`: one element per literal.
            Val::A(items) => Ok(items.len()),
            _ => err(
                span,
                "array dimension must be a non-negative Integer known at translation time",
            ),
        }
    }
}
