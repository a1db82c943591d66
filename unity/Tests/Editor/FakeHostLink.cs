using System;
using System.Collections.Generic;
using NUnit.Framework;

namespace Rcadia.Agent.Tests
{
    /// <summary>
    /// A host link for tests: records what the game posts and delivers messages as the host
    /// (window.parent) would. The jslib's source check is tested in Tests/Node~/bridge.test.mjs.
    /// </summary>
    public sealed class FakeHostLink : IHostLink
    {
        readonly List<string> sent = new List<string>();
        Action<string> receive;

        public int OpenCount { get; private set; }
        public int CloseCount { get; private set; }
        public bool IsOpen { get { return receive != null; } }

        /// <summary>Every message the game posted, as JSON text, in order.</summary>
        public List<string> Sent { get { return sent; } }

        public void Open(Action<string> onMessage)
        {
            receive = onMessage;
            OpenCount++;
        }

        public void Post(string messageJson)
        {
            // What the jslib does first: a message that is not JSON would be lost there.
            JsonValue parsed;
            string error;
            if (!Json.TryParse(messageJson, out parsed, out error)) Assert.Fail("the agent posted text that is not JSON: " + error + "\n" + messageJson);
            sent.Add(messageJson);
        }

        public void Close()
        {
            receive = null;
            CloseCount++;
        }

        /// <summary>Deliver a message from the host. Single quotes in the text stand for double quotes.</summary>
        public void Dispatch(string messageJson)
        {
            if (receive != null) receive(Tick(messageJson));
        }

        /// <summary>Deliver exactly this text (no quote replacement).</summary>
        public void DispatchRaw(string messageText)
        {
            if (receive != null) receive(messageText);
        }

        /// <summary>The data of each message of one type the game sent, in order.</summary>
        public List<JsonValue> SentOfType(string type)
        {
            var list = new List<JsonValue>();
            foreach (var text in sent)
            {
                var m = Json.Parse(text);
                if (m["type"].AsString == type) list.Add(m["data"]);
            }
            return list;
        }

        /// <summary>The data of each message of one type, as normalized JSON text (single quotes for readability).</summary>
        public List<string> SentOfTypeText(string type)
        {
            var list = new List<string>();
            foreach (var d in SentOfType(type)) list.Add(d.ToNormalizedJson().Replace('"', '\''));
            return list;
        }

        /// <summary>Test JSON written with single quotes, turned into real JSON.</summary>
        public static string Tick(string text)
        {
            return text.Replace('\'', '"');
        }
    }
}
