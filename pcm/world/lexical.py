"""An incremental BM25 index over the retrievable memories of one user.

Adding a memory appends its words to the posting lists of those words and nothing else:
no other memory is re-tokenised and no statistic is rebuilt. Scores are computed at query
time from the current document count and average length, with the Lucene variant of BM25
(k1 = 1.5, b = 0.75) exactly as `bm25s` computes it (same float32/float64 steps, same
document order), so replacing the rebuilt `bm25s` index changed no ranking. Words come
from `pcm.world.text.lexical_terms` (English words by their Snowball stem; jieba for Chinese,
with the characters of Chinese words), computed once per memory and stored with it, so
reopening a memory does not tokenise it again.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Iterable
from itertools import chain

import numpy as np

from pcm.formulas import bm25_idf, bm25_term_scores

K1 = 1.5
B = 0.75
#: from this many documents on, `extend` counts words with one sort (`_extend_bulk`)
BULK_DOCUMENTS = 256


class LexicalIndex:
    """Posting lists (document numbers and term frequencies per word), document lengths,
    and the node id of each document, in the order the documents were added."""

    def __init__(self) -> None:
        self._ids: list[str] = []
        self._lengths = array("i")
        self._total_length = 0
        self._postings: dict[str, tuple[array, array]] = {}

    def __len__(self) -> int:
        return len(self._ids)

    @property
    def ids(self) -> list[str]:
        """The document ids in the order of `scores` (do not modify)."""
        return self._ids

    def add(self, doc_id: str, words: list[str]) -> None:
        """Index one document (a memory's content words); an empty list indexes nothing."""
        self.extend([(doc_id, words)])

    def extend(self, documents: list[tuple[str, list[str]]]) -> None:
        """Index documents in order (loading a memory adds them all at once)."""
        if len(documents) >= BULK_DOCUMENTS:
            self._extend_bulk(documents)
            return
        postings = self._postings
        for doc_id, words in documents:
            if not words:
                continue
            number = len(self._ids)
            for word, count in Counter(words).items():
                posting = postings.get(word)
                if posting is None:
                    posting = postings[word] = (array("i"), array("f"))
                posting[0].append(number)
                posting[1].append(count)
            self._ids.append(doc_id)
            self._lengths.append(len(words))
            self._total_length += len(words)

    def _extend_bulk(self, documents: list[tuple[str, list[str]]]) -> None:
        """`extend` for many documents at once: the (word, document) pairs are counted with one
        sort instead of a Counter and two appends per pair (what makes reopening a large memory
        fast); the posting lists come out exactly as `extend` builds them."""
        documents = [(doc_id, words) for doc_id, words in documents if words]
        if not documents:
            return
        first = len(self._ids)
        lengths = np.fromiter((len(words) for _, words in documents), dtype=np.int64, count=len(documents))
        tokens = list(chain.from_iterable(words for _, words in documents))
        vocabulary = {word: code for code, word in enumerate(dict.fromkeys(tokens))}
        codes = np.fromiter(map(vocabulary.__getitem__, tokens), dtype=np.int64, count=len(tokens))
        numbers = np.repeat(np.arange(first, first + len(documents), dtype=np.int64), lengths)
        pairs, counts = np.unique(codes * (first + len(documents)) + numbers, return_counts=True)
        pair_codes, pair_numbers = np.divmod(pairs, first + len(documents))
        starts = np.flatnonzero(np.diff(pair_codes, prepend=-1))
        ends = np.append(starts[1:], len(pairs))
        pair_numbers = pair_numbers.astype(np.int32)
        counts = counts.astype(np.float32)
        words = list(vocabulary)
        for start, end in zip(starts.tolist(), ends.tolist()):
            word = words[int(pair_codes[start])]
            posting = self._postings.get(word)
            if posting is None:
                posting = self._postings[word] = (array("i"), array("f"))
            posting[0].frombytes(pair_numbers[start:end].tobytes())
            posting[1].frombytes(counts[start:end].tobytes())
        self._ids.extend(doc_id for doc_id, _ in documents)
        self._lengths.frombytes(lengths.astype(np.int32).tobytes())
        self._total_length += int(lengths.sum())

    def remove_last(self, doc_id: str, words: list[str]) -> None:
        """Undo the latest `add` (a rolled-back turn removes its memories newest first)."""
        if not words:
            return
        if not self._ids or self._ids[-1] != doc_id:
            raise ValueError(f"{doc_id!r} is not the latest indexed document")
        number = len(self._ids) - 1
        for word in dict.fromkeys(words):
            docs, frequencies = self._postings[word]
            if docs and docs[-1] == number:
                docs.pop()
                frequencies.pop()
            if not docs:
                del self._postings[word]
        self._ids.pop()
        self._total_length -= self._lengths.pop()

    def document_frequency(self, word: str) -> int:
        """How many documents contain `word`."""
        posting = self._postings.get(word)
        return len(posting[0]) if posting else 0

    def scores(self, terms: list[str]) -> np.ndarray:
        """BM25 score of every document for the query terms (repeated terms count again),
        float32 and in document order, as `bm25s.BM25().get_scores` returns them."""
        count = len(self._ids)
        scores = np.zeros(count, dtype=np.float32)
        if count == 0:
            return scores
        average_length = np.float64(self._total_length) / count
        lengths = np.frombuffer(self._lengths, dtype=np.int32)
        for term in terms:
            posting = self._postings.get(term)
            if posting is None:
                continue
            docs = np.frombuffer(posting[0], dtype=np.int32)
            idf = np.float32(bm25_idf(len(docs), count))
            frequencies = np.frombuffer(posting[1], dtype=np.float32)
            term_scores = bm25_term_scores(idf, frequencies, lengths[docs], average_length, K1, B)
            np.add.at(scores, docs, term_scores.astype(np.float32))
        return scores

    def search(self, terms: Iterable[str], n: int, accept: Callable[[str], bool]) -> dict[str, float]:
        """The raw BM25 scores of the best `n` documents that `accept` lets through."""
        known = [t for t in terms if t in self._postings]
        if not known or n <= 0:
            return {}
        scores = self.scores(known)
        out: dict[str, float] = {}
        for number in np.argsort(-scores):
            if scores[number] <= 0 or len(out) >= n:
                break
            doc_id = self._ids[number]
            if accept(doc_id):
                out[doc_id] = float(scores[number])
        return out
