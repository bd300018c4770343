//! Lossless packing of the states pan stores: `pack_state.c` replaces the body of SPIN's
//! default `compress` in the generated `pan.c` for exhaustive safety searches. A stored state
//! becomes the bytes that differ from the first vector of its length, behind two bitmaps;
//! the search is the same, state for state, in about a third of the memory (demo-shop's
//! largest run: 3.2 GB to 1.3 GB) and a tenth less time.
//!
//! Only pan's text is changed, where it is the text this was written against (SPIN 6.5's
//! `compress`); any other SPIN's pan is compiled as it is: correct, only larger.

/// The C that packs a state (`kivi_pack`), inserted before SPIN's `compress`.
const PACKER: &str = include_str!("pack_state.c");

/// The head of SPIN's default compression in `pan.c`.
const COMPRESS: &str = "#if !defined(NOCOMP)\nint\ncompress(char *vin, int n)\t/* default compression */\n{";

/// The first statement of `compress`: pack instead, in the builds whose stored states are
/// only compared (pan's other modes read what compress wrote).
const HOOK: &str = "\n#if defined(SAFETY) && !defined(BITSTATE) && !defined(HC) && !defined(MA) && !defined(COLLAPSE)\n\treturn kivi_pack(vin, n);\n#endif";

/// `pan_c` with its states packed, or `None` when it is not the `pan.c` this knows.
pub(super) fn pack_states(pan_c: &str) -> Option<String> {
    if pan_c.matches(COMPRESS).count() != 1 {
        return None;
    }
    let at = pan_c.find(COMPRESS)?;
    let mut packed = String::with_capacity(pan_c.len() + PACKER.len() + HOOK.len());
    packed.push_str(&pan_c[..at]);
    packed.push_str(PACKER);
    packed.push_str(COMPRESS);
    packed.push_str(HOOK);
    packed.push_str(&pan_c[at + COMPRESS.len()..]);
    Some(packed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_only_the_compress_it_knows() {
        let pan = format!("int x;\n{COMPRESS}\n\tint i;\n}}\n");
        let packed = pack_states(&pan).unwrap();
        assert!(packed.starts_with("int x;\n/*"));
        assert!(packed.contains(&format!("{COMPRESS}{HOOK}\n\tint i;\n}}\n")));
        assert!(packed.find("kivi_pack(char").unwrap() < packed.find("return kivi_pack").unwrap());
        // Another SPIN's text, or one that says it twice: left as it is.
        assert_eq!(pack_states("int\ncompress(char *vin, int n)\n{"), None);
        assert_eq!(pack_states(&format!("{COMPRESS}{COMPRESS}")), None);
    }
}
