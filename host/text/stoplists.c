/* The named stopword lists: data copied from their sources, not derived. */
#include "stoplists.h"

#include <string.h>

/* org.apache.lucene.analysis.en.EnglishAnalyzer.ENGLISH_STOP_WORDS_SET, the
 * set Anserini's default English analyzer drops. */
static const char *const lucene[] = {
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is",
    "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there",
    "these", "they", "this", "to", "was", "will", "with"};

/* https://snowballstem.org/algorithms/english/stop.txt, in its order. */
static const char *const snowball[] = {
    "i", "me", "my", "myself", "we", "our", "ours", "ourselves", "you", "your", "yours",
    "yourself", "yourselves", "he", "him", "his", "himself", "she", "her", "hers", "herself",
    "it", "its", "itself", "they", "them", "their", "theirs", "themselves", "what", "which",
    "who", "whom", "this", "that", "these", "those", "am", "is", "are", "was", "were", "be",
    "been", "being", "have", "has", "had", "having", "do", "does", "did", "doing", "would",
    "should", "could", "ought", "i'm", "you're", "he's", "she's", "it's", "we're", "they're",
    "i've", "you've", "we've", "they've", "i'd", "you'd", "he'd", "she'd", "we'd", "they'd",
    "i'll", "you'll", "he'll", "she'll", "we'll", "they'll", "isn't", "aren't", "wasn't",
    "weren't", "hasn't", "haven't", "hadn't", "doesn't", "don't", "didn't", "won't",
    "wouldn't", "shan't", "shouldn't", "can't", "cannot", "couldn't", "mustn't", "let's",
    "that's", "who's", "what's", "here's", "there's", "when's", "where's", "why's", "how's",
    "a", "an", "the", "and", "but", "if", "or", "because", "as", "until", "while", "of", "at",
    "by", "for", "with", "about", "against", "between", "into", "through", "during",
    "before", "after", "above", "below", "to", "from", "up", "down", "in", "out", "on", "off",
    "over", "under", "again", "further", "then", "once", "here", "there", "when", "where",
    "why", "how", "all", "any", "both", "each", "few", "more", "most", "other", "some",
    "such", "no", "nor", "not", "only", "own", "same", "so", "than", "too", "very"};

static const char *const empty[] = {""};

const char *const *tdm_stoplist_named(const char *name, size_t *n)
{
    if (!strcmp(name, "lucene")) {
        *n = sizeof lucene / sizeof *lucene;
        return lucene;
    }
    if (!strcmp(name, "snowball")) {
        *n = sizeof snowball / sizeof *snowball;
        return snowball;
    }
    if (!strcmp(name, "none")) {
        *n = 0;
        return empty;
    }
    return NULL;
}
