/* text_attrs.h — attribute indices of the text family's ops (ir/ops/text.c),
 * shared with their emitters (backend/c/emit_text.c). Conventions in
 * ir/op.h ("Attribute indices"). */
#ifndef GRAPHC_TEXT_ATTRS_H
#define GRAPHC_TEXT_ATTRS_H

/* TfIdfVectorizer */
enum {
    TFIDF_MAX_GRAM_LENGTH, TFIDF_MAX_SKIP_COUNT, TFIDF_MIN_GRAM_LENGTH, TFIDF_MODE, TFIDF_NGRAM_COUNTS,
    TFIDF_NGRAM_INDEXES, TFIDF_POOL_INT64S, TFIDF_WEIGHTS, TFIDF_COUNT
};

#endif
