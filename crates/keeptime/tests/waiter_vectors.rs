//! Replays `spec/vectors/waiter.json`: the async waiter's pure decisions
//! (`next_step`, `fires`, `plan`, `learns_latency`, `finish_share`) row by row, and
//! `Capacity` and `Admission` (offers included) through their sequences, with exact assertions
//! (`spec/waiter.md`).

use keeptime::waiter::{
    finish_share, fires, learns_latency, next_step, offers_finish, plan, relay_wait, relays,
    Admission, Capacity, Plan, Step, TimerState,
};
use serde_json::Value;

fn vectors() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../spec/vectors/waiter.json"
    );
    let text = std::fs::read_to_string(path).expect("spec/vectors/waiter.json");
    let v: Value = serde_json::from_str(&text).expect("the vectors parse");
    assert_eq!(v["version"], 1);
    v
}

fn u(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} is not a u64 in {v}"))
}

fn b(v: &Value, key: &str) -> bool {
    v[key]
        .as_bool()
        .unwrap_or_else(|| panic!("{key} is not a bool in {v}"))
}

fn rows<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    let rows = v[key].as_array().unwrap_or_else(|| panic!("no {key}"));
    assert!(!rows.is_empty(), "{key} has no rows");
    rows
}

#[test]
fn the_constants_are_the_specs() {
    use keeptime::waiter::*;
    let v = vectors();
    let c = &v["constants"];
    for (name, value) in [
        ("FINISH_SPIN_NS", FINISH_SPIN_NS),
        ("MAX_FINISH_SPIN_NS", MAX_FINISH_SPIN_NS),
        ("MAX_LEAD_NS", MAX_LEAD_NS),
        ("BATCH_NS", BATCH_NS),
        ("COARSE_SLACK_NS", COARSE_SLACK_NS),
        ("COARSE_PERIOD_NS", COARSE_PERIOD_NS),
        ("SLOT_NS", SLOT_NS),
        ("BEHIND_BACKLOG", BEHIND_BACKLOG),
        ("DEFAULT_COST_NS", DEFAULT_COST_NS),
        ("MIN_COST_NS", MIN_COST_NS),
        ("MAX_COST_NS", MAX_COST_NS),
        ("LATE_NS", LATE_NS),
        ("CAPACITY_SHARE_PPM", CAPACITY_SHARE_PPM),
        ("LEAD_SHARE_PPM", LEAD_SHARE_PPM),
        ("SATURATED_LOAD", SATURATED_LOAD),
        ("SATURATION_SLOTS", SATURATION_SLOTS),
        ("TRICKLE_SHARE_PPM", TRICKLE_SHARE_PPM),
        ("RELAY_DIRECT", RELAY_DIRECT as u64),
        ("RELAY_SMALL_BATCH", RELAY_SMALL_BATCH as u64),
        ("RELAY_DIRECT_SMALL", RELAY_DIRECT_SMALL as u64),
        ("RELAY_BATCH", RELAY_BATCH as u64),
        ("RELAY_GRACE_NS", RELAY_GRACE_NS),
    ] {
        assert_eq!(u(c, name), value, "{name}");
    }
}

#[test]
fn next_step_follows_the_table() {
    let v = vectors();
    for row in rows(&v, "next_step") {
        let name = row["name"].as_str().expect("name");
        let state = match row["state"].as_str().expect("state") {
            "unarmed" => TimerState::Unarmed,
            "armed" => TimerState::Armed,
            "fired" => TimerState::Fired {
                lead_ns: u(row, "fired_lead_ns"),
            },
            s => panic!("{name}: unknown state {s}"),
        };
        let want = match row["expect"].as_str().expect("expect") {
            "done" => Step::Done,
            "spin" => Step::Spin,
            "wait" => Step::Wait,
            "yield" => Step::Yield,
            "arm" => Step::Arm {
                lead_ns: u(row, "expect_lead_ns"),
            },
            s => panic!("{name}: unknown step {s}"),
        };
        let got = next_step(
            u(row, "now_ns"),
            u(row, "deadline_ns"),
            state,
            u(row, "lead_ns"),
            u(row, "finish_spin_ns"),
            b(row, "behind"),
        );
        assert_eq!(got, want, "next_step: {name}");
    }
}

#[test]
fn fires_plan_and_learns_latency_follow_the_rules() {
    let v = vectors();
    for row in rows(&v, "fires") {
        assert_eq!(
            fires(u(row, "wake_ns"), b(row, "precise"), u(row, "now_ns")),
            b(row, "expect"),
            "fires: {row}"
        );
    }
    for row in rows(&v, "plan") {
        let want = match &row["expect"] {
            Value::Null => None,
            e if e.get("precise").is_some() => Some(Plan::Precise(u(e, "precise"))),
            e => Some(Plan::Coarse(u(e, "coarse"))),
        };
        assert!(
            row.get("last_coarse_ns").is_some(),
            "plan rows state last_coarse_ns: {row}"
        );
        let got = plan(
            row["precise_ns"].as_u64(),
            row["coarse_ns"].as_u64(),
            row["last_coarse_ns"].as_u64(),
        );
        assert_eq!(got, want, "plan: {row}");
    }
    for row in rows(&v, "learns_latency") {
        assert_eq!(
            learns_latency(b(row, "first_in_batch"), u(row, "backlog_before")),
            b(row, "expect"),
            "learns_latency: {row}"
        );
    }
}

#[test]
fn finish_share_charges_a_burst_its_threads_once() {
    let v = vectors();
    let rows = rows(&v, "finish_share");
    assert!(!rows.is_empty());
    for row in rows {
        assert_eq!(
            finish_share(u(row, "stretch_ns"), u(row, "n"), u(row, "threads")),
            u(row, "expect"),
            "finish_share: {row}"
        );
    }
}

fn check_capacity(c: &Capacity, want: &Value, what: &str) {
    assert_eq!(c.cost_ns(), u(want, "cost_ns"), "{what}: cost");
    assert_eq!(c.samples(), u(want, "samples"), "{what}: samples");
    assert_eq!(c.per_second(), u(want, "per_second"), "{what}: per second");
    for s in rows(want, "per_slot_at") {
        assert_eq!(
            c.per_slot_at(u(s, "slot")),
            u(s, "n"),
            "{what}: per_slot_at({})",
            s["slot"]
        );
    }
}

#[test]
fn capacity_sequences() {
    let v = vectors();
    for case in rows(&v, "capacity") {
        let name = case["name"].as_str().expect("name");
        let mut c = Capacity::new();
        check_capacity(&c, &case["start"], name);
        for (i, op) in case["ops"].as_array().expect("ops").iter().enumerate() {
            if op.get("observe_late").is_some() {
                c.observe_late();
            } else {
                c.observe(u(op, "observe"));
            }
            check_capacity(&c, &op["expect"], &format!("{name}, op {i}"));
        }
    }
}

#[test]
fn admission_sequences() {
    let v = vectors();
    for case in rows(&v, "admission") {
        let name = case["name"].as_str().expect("name");
        let mut a = Admission::new();
        // Cases with offers state the learned cost of a precise deadline.
        let mut cap = Capacity::new();
        if let Some(cost) = case["cost_ns"].as_u64() {
            cap.observe(cost);
            assert_eq!(cap.cost_ns(), cost, "{name}: cost");
        }
        for (i, op) in rows(case, "ops").iter().enumerate() {
            if op.get("offer").is_some() {
                let now = u(op, "now_ns");
                let got = a.offer(
                    now,
                    u(op, "offer"),
                    u(op, "lead_ns"),
                    b(op, "concurrent"),
                    &cap,
                );
                assert_eq!(got, b(op, "expect"), "{name}, op {i}: offer");
                let offers = &op["offers"];
                let want = (
                    offers[0].as_u64().expect("before"),
                    offers[1].as_u64().expect("current"),
                );
                assert_eq!(a.offers_at(now), want, "{name}, op {i}: offers_at");
                assert_eq!(
                    a.recent_offers(now),
                    u(op, "recent"),
                    "{name}, op {i}: recent_offers"
                );
                assert_eq!(
                    a.saturated(now, &cap),
                    b(op, "saturated"),
                    "{name}, op {i}: saturated"
                );
            } else if op.get("try_admit").is_some() {
                let got = a.try_admit(u(op, "try_admit"), u(op, "per_slot"));
                assert_eq!(got, b(op, "expect"), "{name}, op {i}: try_admit");
            } else if op.get("release").is_some() {
                a.release(u(op, "release"));
            } else {
                a.forget_before(u(op, "forget_before"));
            }
            for pair in rows(op, "admitted") {
                let deadline = pair[0].as_u64().expect("deadline");
                let n = pair[1].as_u64().expect("count");
                assert_eq!(
                    a.admitted(deadline),
                    n,
                    "{name}, op {i}: admitted in the slot of {deadline}"
                );
            }
        }
    }
}

#[test]
fn relays_all_but_the_first_few() {
    let v = vectors();
    for row in rows(&v, "relays") {
        let k = usize::try_from(u(row, "k")).expect("k fits");
        let n = usize::try_from(u(row, "n")).expect("n fits");
        assert_eq!(relays(k, n), b(row, "expect"), "{row}");
    }
}

#[test]
fn relay_wait_comes_first_only_when_earlier() {
    let v = vectors();
    for row in rows(&v, "relay_wait") {
        let check = row["relay_check_ns"].as_u64();
        let plan_ns = row["plan_ns"].as_u64();
        assert_eq!(relay_wait(check, plan_ns), row["expect"].as_u64(), "{row}");
    }
}

#[test]
fn yields_and_long_spins_are_offered_unless_admitted() {
    let v = vectors();
    for row in rows(&v, "offers_finish") {
        let step = match row["step"].as_str().expect("step") {
            "yield" => Step::Yield,
            "spin" => Step::Spin,
            "wait" => Step::Wait,
            "arm" => Step::Arm { lead_ns: 50_000 },
            other => panic!("unknown step {other}"),
        };
        assert_eq!(
            offers_finish(step, u(row, "remaining_ns"), b(row, "admitted")),
            b(row, "expect"),
            "{row}"
        );
    }
}
