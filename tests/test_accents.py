"""Diacritics put back into a query typed without them, from the words of the notes it matched."""

from __future__ import annotations

import unicodedata

from memoryd.search.accents import restorable, restore_accents

NOTES = [
    "Thành phố Hồ Chí Minh là thành phố lớn nhất Việt Nam.",
    "Khách hàng muốn thanh toán bằng thẻ tín dụng từ tháng sau.",
    "Ông ấy đi học ở thành phố và thanh toán học phí bằng thẻ.",
]


def test_each_word_takes_the_form_its_neighbours_use() -> None:
    # "thanh" is "thành" before "phố" but stays "thanh" before "toán": the pair decides, not the majority
    assert restore_accents("thanh pho Ho Chi Minh", NOTES) == "thành phố Hồ Chí Minh"
    assert restore_accents("khach muon thanh toan bang the", NOTES) == "khách muốn thanh toán bằng thẻ"


def test_case_punctuation_and_typed_marks_are_kept() -> None:
    assert restore_accents("Thanh pho HO CHI MINH?", NOTES) == "Thành phố HỒ CHÍ MINH?"
    assert restore_accents("thành pho", NOTES) == "thành phố"  # a word typed with its marks stays as typed


def test_a_query_with_decomposed_marks_is_read_like_a_composed_one() -> None:
    assert restore_accents(unicodedata.normalize("NFD", "thành pho"), NOTES) == "thành phố"


def test_nothing_changes_without_marked_forms_in_the_notes() -> None:
    english = ["We settled on JWT tokens that expire after 24 hours.", "The café opens at nine."]
    assert restore_accents("what did we decide about tokens", english) is None
    assert restore_accents("when does the cafe open", english) is None  # one word of five: not a spelling of them
    assert restore_accents("thanh pho", []) is None


def test_an_english_query_never_borrows_a_vietnamese_word() -> None:
    # "the" folds like "thẻ", but most of the query's words have no marked form in these notes
    assert restore_accents("what is the city", NOTES) is None


def test_restorable_needs_an_unmarked_latin_word() -> None:
    assert restorable("thanh pho") and restorable("thành pho")
    assert not restorable("thành phố") and not restorable("ฐานข้อมูล") and not restorable("2024")
