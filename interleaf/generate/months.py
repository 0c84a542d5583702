"""A month of a year: named in a question ("revised in June 2019"), dated in a document.

A question about a month and year is about that month: the year printed for another month ("June
2012"), or the month of another year, does not answer it. A document dates a month in many forms,
all of which count: "June 2019", "June 4, 2019", "May 28-June 3, 2019", "Jan. 2019", "06/2019",
"2019-06". Worth, on the dev half: one unanswerable question refused (a plan's revision month
changed), none of the seven answerable ones naming a month of a year.
"""

from __future__ import annotations

import re

# a month's name as documents and questions write it: "May", "Sept.", "January"
MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
# a month of a year without a day; group 1 the month, group 2 the year
MONTH_YEAR = re.compile(
    r"\b(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t|tember)?"
    r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?\s+(?:of\s+)?((?:19|20)\d\d)\b",
    re.I,
)
_DAY = r"\d{1,2}(?:st|nd|rd|th)?(?:\s*[-–]\s*\d{1,2})?,?\s+"  # "3, ", "1-15 "
# a span of days, its year apart: "June 11-August 27", "October 29 - November 4", "March 3rd-20th"
DAY_SPAN = rf"{MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?\s*[-–]\s*(?:{MONTH}\s+)?\d{{1,2}}(?:st|nd|rd|th)?"


def dates_in(text: str, month: str, year: str) -> bool:
    """The text dates something in that month (its name, or its first three letters) of that year."""
    number = _MONTHS.index(month[:3].casefold()) + 1
    words = rf"\b{month[:3]}[a-z]*\.?\s*(?:{_DAY}|of\s+|[-/]\s*)?{year}\b"
    digits = rf"\b0?{number}[/.-](?:\d{{1,2}}[/.-])?{year}\b|\b{year}[/.-]0?{number}\b"
    return re.search(f"{words}|{digits}", text, re.I) is not None
