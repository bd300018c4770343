//! Lossless packing of the states pan stores: `pack_state.c` takes over SPIN's default
//! `compress` in the generated `pan.c` for exhaustive safety searches, and the comparison of
//! stored states in pan's hash chains. A stored state becomes the bytes that differ from the
//! first vector of its length, behind two bitmaps; the search is the same, state for state, in
//! about a third of the memory (demo-shop's largest run: 3.2 GB to 1.3 GB) and a tenth less
//! time.
//!
//! Only pan's text is changed, where it is the text this was written against (SPIN 6.5's
//! `compress` and `h_store`); any other SPIN's pan is compiled as it is: correct, only larger.

/// The C that packs a state (`kivi_pack`) and orders packed states (`kivi_compare`), inserted
/// before SPIN's `compress`.
const PACKER: &str = include_str!("pack_state.c");

/// A random run's choices from one portable generator (SplitMix64) instead of the C
/// library's `rand`, so that a seed draws the same run on every machine (glibc's and musl's
/// `rand` differ). pan's own definitions of `rand` and `srand` take the library's place
/// (pan.m defines `rand` as a macro and undefines it, so a macro would not do). Inserted
/// after pan.c's `<stdlib.h>`, for the randomised builds only.
const PORTABLE_RAND: &str = "\n#if defined(T_RAND) || defined(P_RAND)
/* kivi-lint: one generator for random runs on every machine (SplitMix64) */
static unsigned long long kivi_rand_state = 1;
void srand(unsigned int s) { kivi_rand_state = s; }
int rand(void)
{	unsigned long long z = (kivi_rand_state += 0x9E3779B97F4A7C15ULL);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return (int) ((z ^ (z >> 31)) >> 33);
}
#endif
";

/// A digest of the packer and the generator, part of every build's key.
pub(super) static PACKER_DIGEST: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| blake3::hash(format!("{PACKER}{PORTABLE_RAND}").as_bytes()).to_hex()[..16].to_string());

/// `pan_c` with its random choices drawn by [`PORTABLE_RAND`], or as it is when it does not
/// include `<stdlib.h>` where this expects.
pub(super) fn portable_rand(pan_c: &str) -> String {
    const STDLIB: &str = "#include <stdlib.h>\n";
    pan_c.replacen(STDLIB, &format!("{STDLIB}{PORTABLE_RAND}"), 1)
}

/// The builds whose stored states are only compared (pan's other modes read what compress
/// wrote, or keep their own tables).
const PACKED_BUILDS: &str =
    "#if defined(SAFETY) && !defined(BITSTATE) && !defined(HC) && !defined(MA) && !defined(COLLAPSE)";

/// The head of SPIN's default compression in `pan.c`.
const COMPRESS: &str = "#if !defined(NOCOMP)\nint\ncompress(char *vin, int n)\t/* default compression */\n{";

/// The comparison of a new state with a stored one in `h_store`.
const COMPARE: &str = "\t\tm = memcmp(((char *)&(tmp->state)) + S_A, \n\t\t\tv + S_A, n - S_A);\n";

/// `pan_c` with its states packed, or `None` when it is not the `pan.c` this knows.
pub(super) fn pack_states(pan_c: &str) -> Option<String> {
    if pan_c.matches(COMPRESS).count() != 1 || pan_c.matches(COMPARE).count() != 1 {
        return None;
    }
    let compress = format!("{PACKER}{COMPRESS}\n{PACKED_BUILDS}\n\treturn kivi_pack(vin, n);\n#endif");
    let compare = format!(
        "{PACKED_BUILDS}\n\t\tm = kivi_compare(((char *)&(tmp->state)) + S_A, v + S_A, n - S_A);\n#else\n{COMPARE}#endif\n"
    );
    Some(pan_c.replacen(COMPRESS, &compress, 1).replacen(COMPARE, &compare, 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_runs_draw_from_the_portable_generator() {
        let pan = "#include <stdio.h>\n#include <stdlib.h>\nint main() { srand(7); return rand(); }\n";
        let drawn = portable_rand(pan);
        let at = drawn.find("int rand(void)").expect("the generator");
        assert!(
            drawn.find("#include <stdlib.h>").unwrap() < at,
            "after the library's declarations"
        );
        assert!(at < drawn.find("int main()").unwrap(), "before pan's code");
        assert_eq!(drawn.matches("void srand(unsigned int s)").count(), 1);
        // Only randomised builds: the generator is behind T_RAND or P_RAND.
        assert!(drawn.contains("#if defined(T_RAND) || defined(P_RAND)"));
        assert_eq!(portable_rand("int main() { return 0; }"), "int main() { return 0; }");
    }

    #[test]
    fn packs_only_the_pan_it_knows() {
        let pan = format!("int x;\n{COMPRESS}\n\tint i;\n}}\nh_store() {{\n{COMPARE}}}\n");
        let packed = pack_states(&pan).unwrap();
        assert!(packed.starts_with("int x;\n/*"));
        assert!(packed.contains(&format!(
            "{COMPRESS}\n{PACKED_BUILDS}\n\treturn kivi_pack(vin, n);\n#endif\n\tint i;\n}}\n"
        )));
        assert!(packed.contains("\t\tm = kivi_compare("));
        // pan's own comparison stays for the other builds
        assert!(packed.contains(&format!("#else\n{COMPARE}#endif\n")));
        assert!(packed.find("kivi_pack(char").unwrap() < packed.find("return kivi_pack").unwrap());
        assert!(packed.find("kivi_compare(char").unwrap() < packed.find("m = kivi_compare").unwrap());
        // Another SPIN's text, only half of it, or one that says it twice: left as it is.
        assert_eq!(pack_states("int\ncompress(char *vin, int n)\n{"), None);
        assert_eq!(pack_states(&format!("{COMPRESS}\n}}\n")), None);
        assert_eq!(pack_states(&format!("{COMPRESS}{COMPRESS}{COMPARE}")), None);
    }
}
