"""Write ``data/agent_transcript.json``: a made-up agent run (lesson 09) whose tool results are large.

A user plans a trip in Korean; the agent calls a weather tool and a search tool several times and
each result is long (hourly forecasts as JSON, guide pages). The messages are in OpenAI's chat format
(``role``, ``content``, ``tool_calls``, ``tool_call_id``), so ``convert_to_messages`` reads them.
Deterministic: the same file every run. ``python scripts/make_agent_transcript.py [--out PATH]``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CITIES = {"서울": (3, -4, "맑음"), "부산": (9, 2, "구름 조금"), "강릉": (5, -1, "눈")}
DAYS = ["월", "화", "수", "목", "금", "토", "일"]


def forecast(city: str) -> str:
    high, low, sky = CITIES[city]
    hours = [{"day": d, "hour": h, "temp_c": low + (high - low) * (h in (12, 15)) + i % 3,
              "sky": sky if (i + h) % 4 else "흐림", "rain_mm": round(((i * 7 + h) % 5) * 0.4, 1)}
             for i, d in enumerate(DAYS) for h in (0, 6, 9, 12, 15, 18, 21)]
    return json.dumps({"city": city, "units": "metric", "hourly": hours}, ensure_ascii=False)


def guide(topic: str) -> str:
    places = ["시장", "박물관", "해변 산책로", "전망대", "미술관", "사찰", "야시장", "공원", "케이블카",
              "카페 거리", "항구", "도서관"]
    lines = [f"{topic} 안내 {n}: {place}은(는) 오전 {9 + n % 3}시에 열고 입장료는 {1000 * (n % 5 + 1)}원"
             f"입니다. 대중교통으로 {10 + n}분 걸리고, 주말에는 붐빕니다. 근처 식당은 점심에 줄이 길고, "
             f"비가 오면 {place} 대신 지하상가를 둘러보는 방문객이 많습니다. 사진은 해 질 무렵이 좋아요."
             for n, place in enumerate(places)]
    return "\n".join(lines)


def call(n: int, name: str, **args) -> dict:
    return {"id": f"call_{n}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}


def transcript() -> list[dict]:
    m = [{"role": "system", "content": "You are a travel assistant. Use the tools; answer in the user's "
          "language."},
         {"role": "user", "content": "다음 주에 서울, 부산, 강릉 중 한 곳으로 여행 가요. 날씨를 비교해 "
          "줄래요?"}]
    for n, city in enumerate(CITIES, 1):
        m += [{"role": "assistant", "content": "", "tool_calls": [call(n, "get_weather", city=city)]},
              {"role": "tool", "tool_call_id": f"call_{n}", "name": "get_weather",
               "content": forecast(city)}]
    m += [{"role": "assistant", "content": "부산이 가장 따뜻해요(낮 최고 9도). 강릉은 눈, 서울은 맑지만 "
           "추워요."},
          {"role": "user", "content": "부산으로 갈게요. 볼거리를 찾아 줘요."}]
    for n, topic in enumerate(["부산 명소", "부산 야경"], 4):
        m += [{"role": "assistant", "content": "", "tool_calls": [call(n, "search_guide", query=topic)]},
              {"role": "tool", "tool_call_id": f"call_{n}", "name": "search_guide", "content": guide(topic)}]
    m += [{"role": "assistant", "content": "시장과 해변 산책로, 전망대를 추천해요. 야시장은 저녁에 가세요."},
          {"role": "user", "content": "토요일 낮 최고 기온이 몇 도였죠? 그리고 전망대 입장료는요?"},
          {"role": "assistant", "content": "", "tool_calls": [call(6, "search_guide", query="부산 전망대")]},
          {"role": "tool", "tool_call_id": "call_6", "name": "search_guide", "content": guide("부산 전망대")},
          {"role": "assistant", "content": "전망대 입장료는 4,000원이에요."}]
    return m


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "data" / "agent_transcript.json")
    args = parser.parse_args(argv)
    data = {"description": "A made-up agent run for lesson 09 (scripts/make_agent_transcript.py): a trip "
            "planned in Korean, six tool calls with long results. Not a real model's output.",
            "messages": transcript()}
    args.out.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"written: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
