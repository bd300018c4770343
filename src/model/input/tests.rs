use super::*;

#[test]
fn every_table_has_an_assignment() {
    let a = assignments();
    assert_eq!(a.len(), TABLES.len());
    assert_eq!(a[0], "node_count = in_value");
    assert!(a.contains(&"pod[in_index].status = in_value".to_string()));
    assert!(a.contains(&"node_cpu[in_index] = in_value".to_string()));
}
