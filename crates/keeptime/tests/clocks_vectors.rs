//! Replays `spec/vectors/clocks.json`: the clock report's findings, from the
//! report's own inputs (clocks, machine, idle latency), as every runtime must
//! make them (`spec/clocks.md`).

use keeptime::clocks::{findings, ClockInfo, IdleLatency, MachineInfo, Severity};
use serde::Deserialize;

#[derive(Deserialize)]
struct Vectors {
    version: u32,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    name: String,
    clocks: Vec<ClockInfo>,
    machine: MachineInfo,
    #[serde(default)]
    idle_latency: Option<IdleLatency>,
    findings: Vec<Expected>,
}

#[derive(Deserialize, Debug, PartialEq)]
struct Expected {
    severity: Severity,
    code: String,
}

#[test]
fn every_runtime_makes_these_findings() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../spec/vectors/clocks.json"
    );
    let text = std::fs::read_to_string(path).expect("spec/vectors/clocks.json");
    let vectors: Vectors = serde_json::from_str(&text).expect("the vectors parse");
    assert_eq!(vectors.version, 1);
    assert!(vectors.cases.len() >= 15);
    for case in &vectors.cases {
        let made: Vec<Expected> = findings(&case.clocks, &case.machine, case.idle_latency.as_ref())
            .into_iter()
            .map(|f| {
                assert!(
                    !f.message.is_empty(),
                    "{}: {} has no message",
                    case.name,
                    f.code
                );
                Expected {
                    severity: f.severity,
                    code: f.code,
                }
            })
            .collect();
        assert_eq!(made, case.findings, "case: {}", case.name);
    }
}
