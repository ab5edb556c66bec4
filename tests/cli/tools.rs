//! `nib tools`: the tool list as the model receives it.

use serde_json::Value;

use crate::support::{Ws, nib};

#[test]
fn json_is_the_schema_list_in_fixed_order() {
    let ws = Ws::new();
    let run = nib(&["tools", "--json"], ws.root(), None);
    assert_eq!(run.code, 0, "{run:?}");
    let list: Value = serde_json::from_str(&run.stdout).expect("JSON");
    let names: Vec<&str> = list
        .as_array()
        .expect("a list")
        .iter()
        .map(|t| t["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names[0], "fs-read");
    assert_eq!(names.len(), 11);
    let edit = &list[6];
    assert_eq!(edit["name"], "fs-edit");
    let items = &edit["parameters"]["properties"]["edits"]["items"];
    assert_eq!(items["required"], serde_json::json!(["old", "new"]));
}

#[test]
fn readable_list_shows_positional_forms_and_roles() {
    let ws = Ws::new();
    let run = nib(&["tools"], ws.root(), None);
    assert_eq!(run.code, 0);
    assert!(
        run.stdout
            .contains("(fs-edit path [old] [new] [replace_all] [edits])    write")
    );
    assert!(run.stdout.contains("new (string, required, role payload)"));
}
