"""Drives horst's MCP endpoint with the official Python SDK (`mcp`), in its default mode:
it first probes a newer protocol revision (`server/discover`) and must fall back to
`initialize`. The SDK validates every `structuredContent` against the tool's
`outputSchema` and raises when it does not match.

Usage: python python_client.py URL [KEY]
With KEY it also runs the recommended loop (playtest, simulate, submit, status, retry).
Prints `python client: OK` at the end; any failure raises.
"""

import asyncio
import json
import sys

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

LEVEL = open(sys.argv[3]).read() if len(sys.argv) > 3 else None
REPLAY = json.loads(open(sys.argv[4]).read()) if len(sys.argv) > 4 else None
TINY = "gcv-map 1\nname: Kurz\nsize: 8 3\ngrid:\n........\n........\nGGGGGGGG\nentities:\nstart 1 1\nnest 5 1\n"
# A hole between the start and the nest: walking right falls out of the map.
HOLE = "gcv-map 1\nname: Loch\nsize: 10 3\ngrid:\n..........\n..........\nGGG...GGGG\nentities:\nstart 1 1\nnest 8 1\n"
WALK_RIGHT = {"seed": 1, "actions": [{"action": 8, "ticks": 240}]}


def structured(result, ok=True):
    assert result.is_error is (not ok), result
    text = json.loads(result.content[0].text)
    if ok:
        assert text == result.structured_content, (text, result.structured_content)
    else:
        assert result.structured_content is None, result
    return text


async def main(url, key):
    headers = {"Authorization": f"Bearer {key}"} if key else None
    http = create_mcp_http_client(headers=headers)
    # Record what the SDK sends: in its default mode it must probe `server/discover` at a
    # newer revision first, get refused, and fall back to `initialize`.
    seen = []

    async def on_request(request):
        body = request.content or b""
        method = json.loads(body).get("method") if body.startswith(b"{") else None
        seen.append((request.method, method, request.headers.get("mcp-protocol-version")))

    http.event_hooks = {"request": [on_request], "response": []}
    async with http:
        async with Client(streamable_http_client(url, http_client=http, terminate_on_close=True)) as client:
            assert client.protocol_version == "2025-11-25", client.protocol_version
            posts = [m for (verb, m, _) in seen if verb == "POST"]
            assert posts[:2] == ["server/discover", "initialize"], seen
            pal = structured(await client.call_tool("list_palette", {}))
            assert pal["blocks"] and pal["entities"], pal
            tools = await client.list_tools()
            names = sorted(t.name for t in tools.tools)
            assert "validate_map" in names and "render_map" in names, names
            if key:
                # the 12 level tools of the contract, the 5 board tools and contact_admin
                assert len(names) == 18, names
            fmt = structured(await client.call_tool("get_map_format", {}))
            assert "gcv-map" in fmt["format"]
            v = structured(await client.call_tool("validate_map", {"map": TINY}))
            assert v["valid"] is True, v
            r = structured(await client.call_tool("render_map", {"map": TINY, "x": 0, "y": 0, "width": 8, "height": 3}))
            assert r["text"], r
            bad = structured(await client.call_tool("render_map", {"map": TINY, "x": 0, "y": 0, "width": 121, "height": 3}), ok=False)
            assert bad["error"]["code"] == "invalid_input", bad
            # A window partly outside the map is clipped, and with image a PNG comes along.
            pic = await client.call_tool("render_map", {"map": TINY, "x": -2, "y": 0, "width": 20, "height": 3, "image": True})
            clipped = structured(pic)
            assert clipped["clipped"] is True and clipped["window"] == {"x": 0, "y": 0, "width": 8, "height": 3}, clipped
            image = pic.content[1]
            assert image.type == "image" and image.mime_type == "image/png", image
            import base64
            assert base64.b64decode(image.data)[:8] == b"\x89PNG\r\n\x1a\n"
            assert clipped["image"]["width"] == 8 * clipped["image"]["tilePixels"], clipped
            for t in tools.tools:
                if t.name in ("playtest_map", "submit_level", "list_threads"):
                    assert t.description.startswith("Needs an agent key"), t.description
            # Resources and the prompt beside the tools (issue 32).
            listed = await client.list_resources()
            uris = [str(r.uri) for r in listed.resources]
            assert uris[:3] == ["gcv://format", "gcv://palette", "ui://gcv/player"], uris
            assert "gcv://levels/erste-schritte" in uris, uris
            fmt_res = await client.read_resource("gcv://format")
            assert "gcv-map" in fmt_res.contents[0].text, fmt_res
            lvl_res = await client.read_resource("gcv://levels/erste-schritte")
            assert "gcv-map 1" in lvl_res.contents[0].text
            meta = json.loads(lvl_res.contents[1].text)
            assert meta["name"] == "erste-schritte" and meta["replay"]["actions"], meta
            rev_res = await client.read_resource("gcv://revisions/" + meta["revisionId"])
            assert rev_res.contents[0].text == lvl_res.contents[0].text
            templates = await client.list_resource_templates()
            assert [t.uri_template for t in templates.resource_templates] == ["gcv://levels/{name}", "gcv://revisions/{revisionId}"]
            app = await client.read_resource("ui://gcv/player")
            assert app.contents[0].mime_type == "text/html;profile=mcp-app" and "<html" in app.contents[0].text
            prompts = await client.list_prompts()
            assert [p.name for p in prompts.prompts] == ["design_level"], prompts
            prompt = await client.get_prompt("design_level", {"theme": "Gipfelsturm", "size": "small", "difficulty": "easy"})
            assert "Gipfelsturm" in prompt.messages[0].content.text and "validate_map" in prompt.messages[0].content.text
            try:
                await client.read_resource("gcv://levels/gibt-es-nicht")
                raise AssertionError("an unknown level must not read")
            except AssertionError:
                raise
            except Exception as e:
                assert "gibt-es-nicht" in str(e) or "no" in str(e), e
            ui_tools = sorted(t.name for t in tools.tools if (t.meta or {}).get("ui", {}).get("resourceUri") == "ui://gcv/player")
            assert ui_tools == ["get_level", "playtest_map", "simulate_replay"], ui_tools
            if not key:
                print("python client: OK")
                return
            p = await client.call_tool("playtest_map", {"map": TINY, "idempotencyKey": "py-p1"})
            if p.is_error:
                assert structured(p, ok=False)["error"]["code"] == "engine_unavailable"
            else:
                assert structured(p)["outcome"] == "won"
            s = structured(await client.call_tool("simulate_replay", {"map": LEVEL, "replay": REPLAY, "idempotencyKey": "py-s1"}))
            assert s["won"] is True, s
            assert s["deathCause"] is None, s
            spikes = "gcv-map 1\nname: Stacheln\nsize: 6 3\ngrid:\n......\n..^^..\nGGGGGG\nentities:\nstart 0 1\nnest 5 1\n"
            run = {"seed": 1, "actions": [{"action": 8, "ticks": 120}]}
            lost = structured(await client.call_tool("simulate_replay", {"map": spikes, "replay": run, "idempotencyKey": "py-s2"}))
            assert lost["outcome"] == "lost" and lost["deathCause"] == {"cause": "spikes", "x": 2, "y": 1}, lost
            fell = structured(await client.call_tool("simulate_replay", {"map": HOLE, "replay": WALK_RIGHT, "idempotencyKey": "py-s3"}))
            assert fell["outcome"] == "lost" and fell["deathCause"]["cause"] == "fell_out", fell
            args = {"name": "py-level", "map": LEVEL, "replay": REPLAY, "idempotencyKey": "py-sub1"}
            sub = structured(await client.call_tool("submit_level", args))
            assert sub["state"] == "labor", sub
            again = structured(await client.call_tool("submit_level", args))
            assert again["revisionId"] == sub["revisionId"] and again["replayed"] is True, again
            st = structured(await client.call_tool("get_submission", {"jobId": sub["jobId"]}))
            assert st["revisionId"] == sub["revisionId"], st
            mine = structured(await client.call_tool("my_submissions", {}))
            assert len(mine["items"]) == 1, mine
            labor = structured(await client.call_tool("list_labor", {}))
            assert labor["items"][0]["revisionId"] == sub["revisionId"], labor
            got = await client.call_tool("get_level", {"name": "py-level", "revisionId": sub["revisionId"]})
            lvl = structured(got)
            assert lvl["map"] == LEVEL
            link = got.content[1]
            assert link.type == "resource_link" and str(link.uri) == "gcv://revisions/" + sub["revisionId"], got.content
            alone = structured(await client.call_tool("get_level", {"revisionId": sub["revisionId"]}))
            assert alone["name"] == "py-level", alone
            wrong = structured(await client.call_tool("get_level", {"name": "other", "revisionId": sub["revisionId"]}), ok=False)
            assert "py-level" in wrong["error"]["message"], wrong
            # A shipped level, published at first start as a promoted revision, read by name.
            shipped = structured(await client.call_tool("get_level", {"name": "erste-schritte"}))
            assert shipped["name"] == "erste-schritte" and shipped["state"] == "promoted", shipped
            assert "\ngcv-map 1\n" in shipped["map"] and shipped["owner"] == "gcv", shipped
            w = structured(await client.call_tool("withdraw_level", {"revisionId": sub["revisionId"]}))
            assert w["state"] == "withdrawn", w
    print("python client: OK")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] else None))
