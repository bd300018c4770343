/*
 * kivi-lint: lossless packing of the states pan stores (src/engine/packing.rs inserts this
 * into the pan.c SPIN generates; it serves exhaustive safety searches only).
 *
 * Most of a model's state vector is the same in every state of a run: processes wait at their
 * loop heads, free pod slots are zero, the bookkeeping of checks not monitored never changes.
 * So a state is stored as the bytes that differ from the first vector of its length (without
 * the bytes pan's own Mask leaves out, as its compress does), behind two bitmaps: which 8-byte
 * words differ, and for each such word which of its bytes. The encoding starts with its own
 * length and the vector's, and decodes back to the masked vector, so two states are stored
 * alike exactly when pan's compress stores them alike: the search visits the same states in
 * the same order.
 *
 * Stored states now differ in length, so pan's hash chains compare them by length first
 * (kivi_compare): memcmp over the new state's length would read past a shorter stored one.
 */
#include <stdint.h>
#if VECTORSZ >= 32768
#error "kivi-lint: packed lengths have 16 bits"
#endif
static uint64_t *kivi_reference[VECTORSZ / 8 + 2];

static int
kivi_pack(char *vin, int n)
{	uchar *out = (uchar *) &comp_now, *words_changed, *bytes_changed, *bytes;
	uint64_t *reference, word, mask, changed;
	int i, j, len, words = (n + 7) / 8, mark = (words + 7) / 8;
	if (4 + mark + words + n + WS > (int) sizeof(comp_now))
	{	/* pan's own words, which make kivi-lint build it again with a larger vector */
		printf("pan: error, VECTORSZ too small, recompile pan.c");
		printf(" with -DVECTORSZ=N with N>%d\n", 4 + mark + words + n + WS);
		Uerror("aborting");
		return 0;
	}
	reference = kivi_reference[words];
	if (!reference)
	{	reference = kivi_reference[words] = (uint64_t *) emalloc(8 * words);
		memset(reference, 0, 8 * words);
		memcpy(reference, vin, n);
	}
	words_changed = out + 4;
	memset(words_changed, 0, mark);
	len = 4 + mark;
	for (i = 0; i < words; i++)
	{	if (8 * i + 8 <= n)
		{	memcpy(&word, vin + 8 * i, 8);
			memcpy(&mask, Mask + 8 * i, 8);
		} else
		{	word = 0; mask = 0;
			memcpy(&word, vin + 8 * i, n - 8 * i);
			memcpy(&mask, Mask + 8 * i, n - 8 * i);
		}
		/* Mask bytes are 0 or 1: times 255, a mask of the bytes pan leaves out */
		changed = (word ^ reference[i]) & ~(mask * 255);
		if (!changed)
		{	continue;
		}
		words_changed[i >> 3] |= 1 << (i & 7);
		bytes_changed = out + len++;
		*bytes_changed = 0;
		bytes = (uchar *) &changed;
		for (j = 0; j < 8; j++)
		{	if (bytes[j])
			{	*bytes_changed |= 1 << j;
				out[len++] = bytes[j];
			}
		}
	}
	while (len % WS)
	{	out[len++] = 0;
	}
	/* the encoding's length, then the vector's */
	out[0] = len & 255;
	out[1] = (len >> 8) & 255;
	out[2] = n & 255;
	out[3] = (n >> 8) & 255;
	return len;
}

/* pan's order of stored states within a hash chain: by encoded length, then by content. */
static int
kivi_compare(char *stored, char *v, int n)
{	int length = ((uchar *) stored)[0] | ((uchar *) stored)[1] << 8;
	if (length != n)
	{	return length < n ? -1 : 1;
	}
	return memcmp(stored, v, n);
}
