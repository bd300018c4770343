use super::*;
use proptest::prelude::*;

/// Fragments that steer random text towards YAML and Kubernetes shapes.
fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("apiVersion: apps/v1\n".to_string()),
        Just("kind: Deployment\n".to_string()),
        Just("kind: List\nitems:\n".to_string()),
        Just("metadata: {name: x}\n".to_string()),
        Just("spec:\n  replicas: ".to_string()),
        Just("  template:\n    spec:\n      containers: [{resources: {requests: {cpu: ".to_string()),
        Just("topologySpreadConstraints: [{maxSkew: ".to_string()),
        Just("---\n".to_string()),
        Just("&a [*a]\n".to_string()),
        Just("<<: {a: 1}\n".to_string()),
        "[ -~\n\t]{0,12}".prop_map(|s| s),
        any::<u8>().prop_map(|b| (b as char).to_string()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]
    #[test]
    fn any_text_is_read_without_panic(parts in proptest::collection::vec(fragment(), 0..24)) {
        let text: String = parts.concat();
        let mut sources = SourceMap::default();
        let mut diags = Diagnostics::default();
        let (_, loaded) = load_text(&mut sources, "p.yaml", &text, &mut diags);
        for d in diags.iter() {
            prop_assert!(d.span.start.line >= 1 && d.span.start.column >= 1);
            let _ = crate::diagnostics::render(d, &sources, false);
        }
        let _ = loaded;
    }

    #[test]
    fn quantities_round_up_and_scale(int in 0u32..100_000, frac in 0u32..1000) {
        let text = format!("{int}.{frac:03}");
        let q = quantity::Quantity::parse(&text).unwrap();
        prop_assert_eq!(q.milli_value().unwrap(), i64::from(int) * 1000 + i64::from(frac));
        prop_assert_eq!(q.value().unwrap(), i64::from(int) + i64::from(frac > 0));
        let ki = quantity::Quantity::parse(&format!("{int}Ki")).unwrap();
        prop_assert_eq!(ki.value().unwrap(), i64::from(int) * 1024);
    }
}
