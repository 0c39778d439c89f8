//! Readable text of program expressions, for error messages (residuals of failed solves).

use moss_symbolic::program::{ArithOp, PExpr, ProgVar, RelOp};

pub fn expr_to_string(e: &PExpr, vars: &[ProgVar]) -> String {
    let mut s = String::new();
    write_expr(&mut s, e, vars, 0);
    s
}

fn name(v: u32, vars: &[ProgVar]) -> String {
    vars.get(v as usize)
        .map(|p| p.name.clone())
        .unwrap_or_else(|| format!("$slot{v}"))
}

fn prec(e: &PExpr) -> u8 {
    match e {
        PExpr::Or(..) => 1,
        PExpr::And(..) => 2,
        PExpr::Not(..) => 3,
        PExpr::Rel { .. } => 4,
        PExpr::Arith(ArithOp::Add | ArithOp::Sub, ..) => 5,
        PExpr::Arith(ArithOp::Mul | ArithOp::Div, ..) | PExpr::Neg(_) => 6,
        PExpr::Arith(ArithOp::Pow, ..) => 7,
        PExpr::If(..) => 0,
        _ => 9,
    }
}

fn write_expr(s: &mut String, e: &PExpr, vars: &[ProgVar], outer: u8) {
    let p = prec(e);
    let paren = p < outer;
    if paren {
        s.push('(');
    }
    match e {
        PExpr::Const(x) => s.push_str(&format!("{x}")),
        PExpr::Str(t) => s.push_str(&format!("{t:?}")),
        PExpr::Var(v) => s.push_str(&name(*v, vars)),
        PExpr::Pre(v) => s.push_str(&format!("pre({})", name(*v, vars))),
        PExpr::Time => s.push_str("time"),
        PExpr::Neg(a) => {
            s.push('-');
            write_expr(s, a, vars, 7);
        }
        PExpr::Not(a) => {
            s.push_str("not ");
            write_expr(s, a, vars, 4);
        }
        PExpr::Arith(op, a, b) => {
            let sym = match op {
                ArithOp::Add => " + ",
                ArithOp::Sub => " - ",
                ArithOp::Mul => "*",
                ArithOp::Div => "/",
                ArithOp::Pow => "^",
            };
            write_expr(s, a, vars, p);
            s.push_str(sym);
            // right operand of - and / binds tighter
            write_expr(s, b, vars, p + 1);
        }
        PExpr::And(a, b) | PExpr::Or(a, b) => {
            write_expr(s, a, vars, p);
            s.push_str(if matches!(e, PExpr::And(..)) {
                " and "
            } else {
                " or "
            });
            write_expr(s, b, vars, p);
        }
        PExpr::Rel { op, lhs, rhs, .. } => {
            write_expr(s, lhs, vars, p + 1);
            s.push_str(match op {
                RelOp::Lt => " < ",
                RelOp::Le => " <= ",
                RelOp::Gt => " > ",
                RelOp::Ge => " >= ",
                RelOp::Eq => " == ",
                RelOp::Ne => " <> ",
            });
            write_expr(s, rhs, vars, p + 1);
        }
        PExpr::If(c, a, b) => {
            s.push_str("if ");
            write_expr(s, c, vars, 0);
            s.push_str(" then ");
            write_expr(s, a, vars, 0);
            s.push_str(" else ");
            write_expr(s, b, vars, 0);
        }
        PExpr::Call { func, args } => {
            s.push_str(func);
            write_list(s, "(", args, vars, ")");
        }
        PExpr::Array(elems) => write_list(s, "{", elems, vars, "}"),
        PExpr::Initial => s.push_str("initial()"),
        PExpr::Terminal => s.push_str("terminal()"),
        PExpr::Sample(id) => s.push_str(&format!("sample#{id}")),
    }
    if paren {
        s.push(')');
    }
}

fn write_list(s: &mut String, open: &str, items: &[PExpr], vars: &[ProgVar], close: &str) {
    s.push_str(open);
    for (i, a) in items.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        write_expr(s, a, vars, 0);
    }
    s.push_str(close);
}
