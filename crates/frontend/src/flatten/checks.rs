//! Checks made while walking structured components: type prefixes on a structured
//! component (spec 4.5), causal connectors of blocks (spec 4.7), balanced connector classes
//! (spec 9.3.1) and stream connectors (spec 15.1). They only report errors, so they are
//! kept apart from the walk that produces the flat model.

use crate::ctx::Flattener;
use crate::expand::qualified;
use crate::inst::*;
use moss_syntax::ast::{self, ClassKind};
use std::rc::Rc;

impl<'a> Flattener<'a> {
    /// Type prefixes on a structured component: not on models/blocks, and not repeating a
    /// prefix that its elements already have (spec 4.5).
    pub(super) fn check_structured_prefixes(
        &self,
        node: &NodeRef,
        comp: &Rc<Comp>,
        ty: &ResolvedType,
        class: crate::loader::ClassId,
    ) -> Res<()> {
        let p = comp.tprefixes;
        let causality = p.causality.or(ty.causality);
        let kind = self.lk.kind(self.lk.follow_short_class(class));
        let any = p.variability.is_some() || causality.is_some() || p.connector.is_some();
        if any && matches!(kind, ClassKind::Model | ClassKind::Block) {
            return err(
                comp.span,
                format!(
                    "`{}`: type prefixes (parameter, input, flow, ...) are not allowed on a component of the {} `{}`",
                    qualified(node, &comp.name),
                    if kind == ClassKind::Model { "model" } else { "block" },
                    self.lk.name_of(class)
                ),
            );
        }
        let fixed = matches!(
            p.variability,
            Some(ast::Variability::Parameter | ast::Variability::Constant)
        );
        if fixed && matches!(kind, ClassKind::Connector | ClassKind::ExpandableConnector) {
            return err(
                comp.span,
                format!(
                    "`{}`: a connector component cannot be declared parameter or constant",
                    qualified(node, &comp.name)
                ),
            )
            .map_err(|d| {
                Box::new(d.with_help(
                    "remove the prefix; parameters and constants belong inside the connector class",
                ))
            });
        }
        if causality.is_none() && p.connector.is_none() {
            return Ok(());
        }
        let child = self.child_node(node, comp, &vec![1; self.comp_dims(node, comp)?.len()])?;
        for c in &self.elems(&child).comps {
            let conflict = (causality.is_some() && c.tprefixes.causality.is_some())
                || (p.connector.is_some() && c.tprefixes.connector.is_some());
            if conflict {
                return err(
                    comp.span,
                    format!(
                        "`{}`: conflicting prefixes, its element `{}` already has an input/output or flow/stream prefix",
                        qualified(node, &comp.name),
                        c.name
                    ),
                );
            }
        }
        Ok(())
    }

    /// A connector has as many flow variables as potential variables (spec 9.3.1);
    /// checked once per connector class ([`crate::connect_rules`]).
    pub(super) fn check_connector_balance(
        &self,
        node: &NodeRef,
        comp: &Rc<Comp>,
        class: crate::loader::ClassId,
    ) -> Res<()> {
        if !self.balance_checked.borrow_mut().insert(class) {
            return Ok(());
        }
        let dims = self.comp_dims(node, comp)?;
        let child = self.child_node(node, comp, &vec![1; dims.len()])?;
        self.check_stream_connector(&child, class)?;
        self.check_balance_of(&child, comp, class)
    }

    /// Every variable of a public connector of a block is an input or an output (spec 4.7).
    pub(super) fn check_block_connector(
        &self,
        node: &NodeRef,
        comp: &Rc<Comp>,
        rank: usize,
    ) -> Res<()> {
        let child = self.child_node(node, comp, &vec![1; rank])?;
        let Some(bad) = self.first_acausal(&child)? else {
            return Ok(());
        };
        err(
            comp.span,
            format!(
                "`{}` is a connector of the block `{}`, but its variable `{bad}` is neither input nor output",
                qualified(node, &comp.name),
                self.lk.name_of(node.class)
            ),
        )
        .map_err(|d| {
            Box::new(d.with_help(
                "a block may only have causal connectors; declare the component in a model instead",
            ))
        })
    }

    /// The first variable of a connector instance without input/output prefix (parameters
    /// and constants excepted).
    fn first_acausal(&self, node: &NodeRef) -> Res<Option<String>> {
        for c in &self.elems(node).comps {
            if matches!(
                c.tprefixes.variability,
                Some(ast::Variability::Parameter | ast::Variability::Constant)
            ) || !self.comp_enabled(node, c)?
            {
                continue;
            }
            let ty = self.comp_type(node, c)?;
            if c.tprefixes.causality.or(ty.causality).is_some() {
                continue;
            }
            match ty.base {
                Base::Class(_) => {
                    let rank = self.comp_dims(node, c)?.len();
                    let child = self.child_node(node, c, &vec![1; rank])?;
                    if let Some(inner) = self.first_acausal(&child)? {
                        return Ok(Some(format!("{}.{inner}", c.name)));
                    }
                }
                _ => return Ok(Some(c.name.to_string())),
            }
        }
        Ok(None)
    }

    /// A connector with stream variables has exactly one scalar flow variable, the one
    /// that gives the direction of the stream (spec 15.1).
    fn check_stream_connector(&self, node: &NodeRef, class: crate::loader::ClassId) -> Res<()> {
        let (mut flows, mut streams) = (0usize, 0usize);
        for c in &self.elems(node).comps {
            let n: usize = self.comp_dims(node, c)?.iter().product();
            match c.tprefixes.connector {
                Some(ast::ConnectorPrefix::Flow) => flows += n,
                Some(ast::ConnectorPrefix::Stream) => streams += n,
                None => {}
            }
        }
        if streams > 0 && flows != 1 {
            let entry = self.lib().get(class);
            return err(
                entry.def.name.span,
                format!(
                    "stream connector `{}` has {flows} scalar flow variables, but it must have exactly one",
                    entry.full_name
                ),
            )
            .map_err(|d| {
                Box::new(d.with_help(
                    "declare one scalar `flow` variable (the mass flow rate that carries the streams)",
                ))
            });
        }
        Ok(())
    }
}
