//! A published state as its change from the previous one, for replays (`replay.rs`).
//!
//! A game's public state often carries its whole story (chess: every move so far, in two
//! notations), so storing each state in full made a replay grow with the square of the
//! game's length: 450 plies of chess filled the 1 MiB a replay keeps. A patch holds only
//! what changed, and what a growing list gained: a chess ply's state is under 200 bytes
//! whatever the game's length.
//!
//! A patch is a JSON value (stored as MessagePack with its line), one of:
//!
//! - `[0, value]`: the value as it is now (replaced);
//! - `[1, {key: patch, ...}, [removed keys]]`: an object's changed and added members (a
//!   key in the map whose old value is absent is added with its patch applied to `null`,
//!   which a `[0, value]` patch is), and the keys it lost;
//! - `[2, keep, [items]]`: an array's first `keep` items, then `items` (the list that grew
//!   or was cut at its end);
//! - `[3, [[index, patch], ...]]`: an array of the same length, its changed items.
//!
//! [`diff`] is pure and [`apply`] never panics: a patch that does not fit its base (a later
//! version's form, a stored line damaged) reads as `None`.

use serde_json::{Map, Value};

const REPLACE: u64 = 0;
const OBJECT: u64 = 1;
const TAIL: u64 = 2;
const ITEMS: u64 = 3;

/// Deepest nesting [`apply`] follows (a patch as deep as its state; states are at most
/// 64 KiB, so this is no limit for a real one, only for a crafted line).
const MAX_DEPTH: usize = 128;

/// The patch that turns `old` into `new` (`apply(old, &diff(old, new)) == Some(new)`).
pub fn diff(old: &Value, new: &Value) -> Value {
    diff_at(old, new, 0)
}

fn replace(new: &Value) -> Value {
    Value::Array(vec![REPLACE.into(), new.clone()])
}

fn diff_at(old: &Value, new: &Value, depth: usize) -> Value {
    if depth >= MAX_DEPTH {
        return replace(new);
    }
    match (old, new) {
        (Value::Object(o), Value::Object(n)) => {
            let mut changed = Map::new();
            for (k, v) in n {
                match o.get(k) {
                    Some(ov) if ov == v => {}
                    Some(ov) => {
                        changed.insert(k.clone(), diff_at(ov, v, depth + 1));
                    }
                    None => {
                        changed.insert(k.clone(), replace(v));
                    }
                }
            }
            let removed: Vec<Value> = o
                .keys()
                .filter(|k| !n.contains_key(*k))
                .map(|k| Value::String(k.clone()))
                .collect();
            Value::Array(vec![
                OBJECT.into(),
                Value::Object(changed),
                Value::Array(removed),
            ])
        }
        (Value::Array(o), Value::Array(n)) => {
            let keep = o.iter().zip(n).take_while(|(a, b)| a == b).count();
            if o.len() == n.len() {
                // The same length: the changed items (a board's squares), unless nearly all
                // of them changed after the common start (then the tail is as short).
                let changed: Vec<Value> = (keep..n.len())
                    .filter(|&i| o[i] != n[i])
                    .map(|i| Value::Array(vec![i.into(), diff_at(&o[i], &n[i], depth + 1)]))
                    .collect();
                if changed.len() * 2 <= n.len() - keep {
                    return Value::Array(vec![ITEMS.into(), Value::Array(changed)]);
                }
            }
            Value::Array(vec![
                TAIL.into(),
                keep.into(),
                Value::Array(n[keep..].to_vec()),
            ])
        }
        _ => replace(new),
    }
}

/// `base` changed by `patch` ([`diff`]'s form); `None` if the patch does not fit the base or
/// is of no known form.
pub fn apply(base: &Value, patch: &Value) -> Option<Value> {
    let mut out = base.clone();
    apply_in(&mut out, patch, 0)?;
    Some(out)
}

fn apply_in(target: &mut Value, patch: &Value, depth: usize) -> Option<()> {
    if depth >= MAX_DEPTH {
        return None;
    }
    let parts = patch.as_array()?;
    match (parts.first()?.as_u64()?, target) {
        (REPLACE, target) if parts.len() == 2 => {
            *target = parts[1].clone();
        }
        (OBJECT, Value::Object(map)) if parts.len() == 3 => {
            for (k, p) in parts[1].as_object()? {
                match map.get_mut(k) {
                    Some(v) => apply_in(v, p, depth + 1)?,
                    None => {
                        let mut v = Value::Null;
                        apply_in(&mut v, p, depth + 1)?;
                        map.insert(k.clone(), v);
                    }
                }
            }
            for k in parts[2].as_array()? {
                map.remove(k.as_str()?);
            }
        }
        (TAIL, Value::Array(items)) if parts.len() == 3 => {
            let keep = usize::try_from(parts[1].as_u64()?).ok()?;
            if keep > items.len() {
                return None;
            }
            items.truncate(keep);
            items.extend(parts[2].as_array()?.iter().cloned());
        }
        (ITEMS, Value::Array(items)) if parts.len() == 2 => {
            for edit in parts[1].as_array()? {
                let [i, p] = edit.as_array()?.as_slice() else {
                    return None;
                };
                let i = usize::try_from(i.as_u64()?).ok()?;
                apply_in(items.get_mut(i)?, p, depth + 1)?;
            }
        }
        _ => return None,
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn round_trip(old: Value, new: Value) -> Value {
        let p = diff(&old, &new);
        assert_eq!(apply(&old, &p), Some(new.clone()), "{old} -> {new}: {p}");
        p
    }

    #[test]
    fn a_patch_turns_the_old_state_into_the_new_one() {
        round_trip(json!(null), json!({"a": 1}));
        round_trip(json!({"a": 1}), json!(null));
        round_trip(
            json!({"a": 1, "b": [1, 2]}),
            json!({"b": [1, 2, 3], "c": {"d": true}}),
        );
        round_trip(json!([1, 2, 3]), json!([1, 2]));
        round_trip(json!([1, 2, 3]), json!([]));
        round_trip(json!([1, 2, 3]), json!([9, 2, 3]));
        round_trip(json!([[1], [2]]), json!([[1], [2, 3]]));
        round_trip(json!("x"), json!(["x"]));
        round_trip(json!({"a": {"b": {"c": 1}}}), json!({"a": {"b": {"c": 2}}}));
        round_trip(json!({"k": 1}), json!({"k": 1}));
    }

    /// A list that grows by one item costs that item, whatever its length: a chess state's
    /// move list no longer makes every state line as long as the game.
    #[test]
    fn a_growing_list_costs_only_what_it_gained() {
        let moves: Vec<String> = (0..1000).map(|i| format!("m{i}")).collect();
        let old = json!({"moves": moves[..999], "n": 999});
        let new = json!({"moves": moves, "n": 1000});
        let p = round_trip(old, new);
        assert!(p.to_string().len() < 60, "{p}");
        // One square of a 64-square board.
        let mut board = vec![json!("."); 64];
        let old = json!({ "board": board.clone() });
        board[40] = json!("Q");
        let p = round_trip(old, json!({ "board": board }));
        assert!(p.to_string().len() < 40, "{p}");
    }

    #[test]
    fn a_patch_that_does_not_fit_reads_as_none() {
        let base = json!({"a": [1, 2]});
        for p in [
            json!(null),
            json!([]),
            json!([7, 1]),
            json!([0]),
            json!([1, {"a": [2, 5, []]}, []]),
            json!([1, {"a": [3, [[9, [0, 1]]]]}, []]),
            json!([1, {"a": [3, [[0]]]}, []]),
            json!([2, 0, []]),
            json!([1, {}, [7]]),
            json!([3, []]),
        ] {
            assert_eq!(apply(&base, &p), None, "{p}");
        }
        // A crafted patch nested past any real state ends, without a stack overflow.
        let mut deep = json!([0, 1]);
        for _ in 0..200 {
            deep = json!([1, { "a": deep }, []]);
        }
        assert_eq!(apply(&json!({}), &deep), None);
    }
}
