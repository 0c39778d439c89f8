//! modelDescription.xml of a small model, FMI 2.0 and 3.0: the variables' causality,
//! variability and start values, and the `ModelStructure` dependencies the blocks give.

use moss_fmi::deps;
use moss_fmi::description::{self, Interfaces};
use moss_fmi::payload::Payload;
use moss_fmi::variables::{self, Table};

const BALL: &str = r#"
model Ball
  parameter Real e = 0.8 "Coefficient of restitution";
  parameter Real h0 = 1 "Drop height";
  Real h(start = h0, fixed = true, unit = "m") "Height";
  Real v(start = 0, fixed = true, unit = "m/s") "Upward speed";
  output Integer bounces(start = 0, fixed = true) "Impacts so far";
  output Real energy = 9.81*h + 0.5*v^2 "Energy per mass";
equation
  der(h) = v;
  der(v) = -9.81;
  when h <= 0 then
    reinit(v, -e*pre(v));
    bounces = pre(bounces) + 1;
  end when;
  annotation(experiment(StopTime = 3, Tolerance = 1e-7));
end Ball;
"#;

fn ball() -> (Payload, Table, deps::Dependencies) {
    // one folder per call: the tests run in parallel threads of one process, and one of
    // them reading the file while another rewrites it saw a half-written model
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "moss-fmi-description-{}-{call}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("creates the folder");
    let model = dir.join("Ball.mo");
    std::fs::write(&model, BALL).expect("writes the model");
    let load = moss_frontend::LoadOptions {
        libs: vec![],
        use_modelicapath: false,
        use_bundled: true,
    };
    let flat = moss_frontend::flatten_model(&load, &model.to_string_lossy())
        .unwrap_or_else(|_| panic!("the ball flattens"));
    let program = moss_symbolic::translate(&flat.model).expect("translates");
    let payload =
        Payload::new(program, vec!["bounces".into(), "energy".into()]).expect("serializes");
    let mut table = variables::table(&payload.program, &payload.outputs);
    // as `moss fmu` does from the flat model; "furlong/s" has no known conversion
    table.set_display_units([("h", "mm"), ("v", "furlong/s")]);
    let initial = description::initial_unknowns(&table);
    let deps = deps::analyse(&payload.program, &table, &initial);
    (payload, table, deps)
}

fn interfaces() -> Interfaces {
    Interfaces {
        model_exchange: true,
        co_simulation: true,
        model_identifier: "Ball".into(),
    }
}

/// The line of the variable `name` (FMI 3.0) or the line after it (FMI 2.0's child element).
fn variable_text<'a>(xml: &'a str, name: &str) -> &'a str {
    let key = format!("name=\"{name}\"");
    let start = xml
        .find(&key)
        .unwrap_or_else(|| panic!("no variable {name}"));
    let line_start = xml[..start].rfind('<').unwrap_or(0);
    let end = xml[start..]
        .find("/>\n")
        .map(|e| start + e)
        .unwrap_or(xml.len());
    let end = xml[end + 3..]
        .find("/>")
        .filter(|_| xml[line_start..end].starts_with("<ScalarVariable"))
        .map_or(end, |e| end + 3 + e);
    &xml[line_start..end]
}

#[test]
fn dependencies_follow_the_blocks() {
    let (_, table, deps) = ball();
    let vr = |n: &str| table.vr_of(n).unwrap_or_else(|| panic!("no {n}"));
    let (h, v, h0) = (vr("h"), vr("v"), vr("h0"));
    assert_eq!(deps.continuous[&vr("der(h)")], vec![v]);
    assert_eq!(deps.continuous[&vr("der(v)")], Vec::<u32>::new());
    // energy depends on both states; bounces changes only at events
    let mut energy = deps.continuous[&vr("energy")].clone();
    energy.sort();
    let mut both = vec![h, v];
    both.sort();
    assert_eq!(energy, both);
    assert_eq!(deps.continuous[&vr("bounces")], Vec::<u32>::new());
    // at initialization h comes from h0, v from nothing
    assert_eq!(deps.initial[&h], vec![h0]);
    assert_eq!(deps.initial[&v], Vec::<u32>::new());
}

#[test]
fn fmi2_description_declares_the_variables() {
    let (payload, table, deps) = ball();
    let xml = description::fmi2(&payload, &table, &deps, &interfaces());
    assert!(xml.contains("fmiVersion=\"2.0\""));
    assert!(xml.contains(&format!("guid=\"{}\"", payload.token)));
    assert!(xml.contains("numberOfEventIndicators=\"1\""), "{xml}");
    assert!(xml.contains("variableNamingConvention=\"structured\""));
    assert!(
        xml.contains("<DefaultExperiment stopTime=\"3.0\" tolerance=\"1e-7\"/>"),
        "{xml}"
    );
    assert!(
        xml.contains("<Unit name=\"m\">\n      <DisplayUnit name=\"mm\" factor=\"1000.0\"/>"),
        "{xml}"
    );
    assert!(xml.contains("<Unit name=\"m/s\"/>"), "{xml}");
    assert!(variable_text(&xml, "h").contains("displayUnit=\"mm\""));
    assert!(!variable_text(&xml, "v").contains("displayUnit"));
    let e = variable_text(&xml, "e");
    assert!(
        e.contains("causality=\"parameter\" variability=\"fixed\""),
        "{e}"
    );
    assert!(e.contains("start=\"0.8\""), "{e}");
    let b = variable_text(&xml, "bounces");
    assert!(
        b.contains("causality=\"output\" variability=\"discrete\""),
        "{b}"
    );
    assert!(b.contains("<Integer/>"), "{b}");
    let der_h = variable_text(&xml, "der(h)");
    let h_index = table.vr_of("h").expect("h") + 1;
    assert!(
        der_h.contains(&format!("derivative=\"{h_index}\"")),
        "{der_h}"
    );
    let h = variable_text(&xml, "h");
    assert!(
        !h.contains("start="),
        "a calculated state has no start: {h}"
    );
}

#[test]
fn fmi3_description_has_time_and_event_indicators() {
    let (payload, table, deps) = ball();
    let xml = description::fmi3(&payload, &table, &deps, &interfaces());
    assert!(xml.contains("fmiVersion=\"3.0\""));
    assert!(xml.contains(&format!("instantiationToken=\"{}\"", payload.token)));
    let time = table.time_vr();
    assert!(xml.contains(&format!(
        "<Float64 name=\"time\" valueReference=\"{time}\" causality=\"independent\""
    )));
    assert_eq!(xml.matches("<EventIndicator ").count(), 1);
    assert!(xml.contains(&format!(
        "<EventIndicator valueReference=\"{}\"/>",
        table.event_indicator_vr(0)
    )));
    let b = variable_text(&xml, "bounces");
    assert!(b.starts_with("<Int32 "), "{b}");
    let h = table.vr_of("h").expect("h");
    let v = table.vr_of("v").expect("v");
    let der_h = table.vr_of("der(h)").expect("der(h)");
    assert!(xml.contains(&format!(
        "<ContinuousStateDerivative valueReference=\"{der_h}\" dependencies=\"{v}\"/>"
    )));
    assert!(variable_text(&xml, "der(h)").contains(&format!("derivative=\"{h}\"")));
}
