using System;
using System.Collections.Generic;
using System.Globalization;
using System.Text;

namespace Rcadia.Agent
{
    /// <summary>
    /// A strict RFC 8259 parser (what JSON.parse accepts, nothing more) for untrusted text. It
    /// reports the first error instead of throwing, and limits nesting to
    /// <see cref="Json.MaxDepth"/> so that no input can exhaust the stack.
    /// </summary>
    internal sealed class JsonParser
    {
        readonly string s;
        readonly bool build;
        int pos;
        int depth;
        string error;
        int errorAt;

        JsonParser(string text, bool build)
        {
            s = text;
            this.build = build;
        }

        /// <summary>Parses a whole document; on failure returns null and sets the error.</summary>
        public static JsonValue Parse(string text, bool build, out string error, out int errorAt)
        {
            var p = new JsonParser(text, build);
            JsonValue v = p.Document();
            error = p.error;
            errorAt = p.errorAt;
            return p.error == null ? v : null;
        }

        JsonValue Document()
        {
            SkipWhitespace();
            if (pos >= s.Length) return Fail("the text is empty; expected a JSON value");
            JsonValue v = Value();
            if (error != null) return null;
            SkipWhitespace();
            if (pos < s.Length) return Fail("unexpected text after the JSON value");
            return v;
        }

        JsonValue Fail(string message)
        {
            if (error == null)
            {
                error = message;
                errorAt = pos;
            }
            return null;
        }

        void SkipWhitespace()
        {
            while (pos < s.Length)
            {
                char c = s[pos];
                if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return;
                pos++;
            }
        }

        JsonValue Value()
        {
            if (pos >= s.Length) return Fail("unexpected end of text; expected a JSON value");
            int start = pos;
            JsonValue v;
            switch (s[pos])
            {
                case '{': v = ObjectValue(); break;
                case '[': v = ArrayValue(); break;
                case '"':
                    {
                        string str = StringLiteral();
                        v = build && str != null ? JsonValue.ParsedString(str) : null;
                        break;
                    }
                case 't': return Literal("true", JsonValue.True);
                case 'f': return Literal("false", JsonValue.False);
                case 'n': return Literal("null", JsonValue.Null);
                default:
                    {
                        char c = s[pos];
                        if (c == '-' || (c >= '0' && c <= '9')) v = NumberValue();
                        else return Fail("unexpected character " + Describe(c) + "; expected a JSON value");
                        break;
                    }
            }
            if (error != null) return null;
            return build ? v.WithSource(s, start, pos - start) : JsonValue.Null;
        }

        JsonValue Literal(string word, JsonValue value)
        {
            if (pos + word.Length > s.Length || string.CompareOrdinal(s, pos, word, 0, word.Length) != 0)
                return Fail("unexpected character " + Describe(s[pos]) + "; expected a JSON value");
            pos += word.Length;
            return value;
        }

        JsonValue ObjectValue()
        {
            if (++depth > Json.MaxDepth) return Fail("nested deeper than " + Json.MaxDepth + " levels");
            pos++; // {
            var members = build ? new List<KeyValuePair<string, JsonValue>>() : null;
            SkipWhitespace();
            if (pos < s.Length && s[pos] == '}')
            {
                pos++;
                depth--;
                return build ? JsonValue.ParsedObject(members) : JsonValue.Null;
            }
            while (true)
            {
                SkipWhitespace();
                if (pos >= s.Length) return Fail("unexpected end of text inside an object");
                if (s[pos] != '"') return Fail("unexpected character " + Describe(s[pos]) + "; expected a member name in double quotes");
                string key = StringLiteral();
                if (error != null) return null;
                SkipWhitespace();
                if (pos >= s.Length) return Fail("unexpected end of text inside an object");
                if (s[pos] != ':') return Fail("unexpected character " + Describe(s[pos]) + "; expected ':' after a member name");
                pos++;
                SkipWhitespace();
                JsonValue v = Value();
                if (error != null) return null;
                if (build) members.Add(new KeyValuePair<string, JsonValue>(key, v));
                SkipWhitespace();
                if (pos >= s.Length) return Fail("unexpected end of text inside an object");
                char c = s[pos++];
                if (c == '}') break;
                if (c != ',')
                {
                    pos--;
                    return Fail("unexpected character " + Describe(c) + "; expected ',' or '}'");
                }
            }
            depth--;
            return build ? JsonValue.ParsedObject(members) : JsonValue.Null;
        }

        JsonValue ArrayValue()
        {
            if (++depth > Json.MaxDepth) return Fail("nested deeper than " + Json.MaxDepth + " levels");
            pos++; // [
            var items = build ? new List<JsonValue>() : null;
            SkipWhitespace();
            if (pos < s.Length && s[pos] == ']')
            {
                pos++;
                depth--;
                return build ? JsonValue.ParsedArray(items) : JsonValue.Null;
            }
            while (true)
            {
                SkipWhitespace();
                JsonValue v = Value();
                if (error != null) return null;
                if (build) items.Add(v);
                SkipWhitespace();
                if (pos >= s.Length) return Fail("unexpected end of text inside an array");
                char c = s[pos++];
                if (c == ']') break;
                if (c != ',')
                {
                    pos--;
                    return Fail("unexpected character " + Describe(c) + "; expected ',' or ']'");
                }
            }
            depth--;
            return build ? JsonValue.ParsedArray(items) : JsonValue.Null;
        }

        // The string's value (null on error). Without build, a value is only made when the
        // string is a member name, which the caller does not keep.
        string StringLiteral()
        {
            pos++; // opening quote
            int start = pos;
            // Fast path: no escapes.
            while (pos < s.Length)
            {
                char c = s[pos];
                if (c == '"')
                {
                    string plain = build ? s.Substring(start, pos - start) : "";
                    pos++;
                    return plain;
                }
                if (c == '\\') break;
                if (c < ' ') return FailString("a control character must be escaped inside a string");
                pos++;
            }
            var sb = build ? new StringBuilder() : null;
            if (build) sb.Append(s, start, pos - start);
            while (pos < s.Length)
            {
                char c = s[pos];
                if (c == '"')
                {
                    pos++;
                    return build ? sb.ToString() : "";
                }
                if (c < ' ') return FailString("a control character must be escaped inside a string");
                if (c != '\\')
                {
                    if (build) sb.Append(c);
                    pos++;
                    continue;
                }
                if (pos + 1 >= s.Length) break;
                char e = s[pos + 1];
                char decoded;
                switch (e)
                {
                    case '"': decoded = '"'; break;
                    case '\\': decoded = '\\'; break;
                    case '/': decoded = '/'; break;
                    case 'b': decoded = '\b'; break;
                    case 'f': decoded = '\f'; break;
                    case 'n': decoded = '\n'; break;
                    case 'r': decoded = '\r'; break;
                    case 't': decoded = '\t'; break;
                    case 'u':
                        {
                            int code = 0;
                            for (int i = 0; i < 4; i++)
                            {
                                int at = pos + 2 + i;
                                int digit = at < s.Length ? HexDigit(s[at]) : -1;
                                if (digit < 0)
                                {
                                    pos = Math.Min(at, s.Length);
                                    return FailString("\\u must be followed by four hex digits");
                                }
                                code = code * 16 + digit;
                            }
                            if (build) sb.Append((char)code); // lone surrogates are kept, as JSON.parse does
                            pos += 6;
                            continue;
                        }
                    default:
                        return FailString("invalid escape \\" + (e < ' ' ? "" : e.ToString()) + " in a string");
                }
                if (build) sb.Append(decoded);
                pos += 2;
            }
            pos = s.Length;
            return FailString("unexpected end of text inside a string");
        }

        string FailString(string message)
        {
            Fail(message);
            return null;
        }

        JsonValue NumberValue()
        {
            int start = pos;
            if (s[pos] == '-') pos++;
            if (pos >= s.Length || !IsDigit(s[pos])) return Fail("a number needs a digit after '-'");
            if (s[pos] == '0')
            {
                pos++;
                if (pos < s.Length && IsDigit(s[pos])) return Fail("a number must not start with 0 followed by more digits");
            }
            else
            {
                while (pos < s.Length && IsDigit(s[pos])) pos++;
            }
            if (pos < s.Length && s[pos] == '.')
            {
                pos++;
                if (pos >= s.Length || !IsDigit(s[pos])) return Fail("a number needs a digit after '.'");
                while (pos < s.Length && IsDigit(s[pos])) pos++;
            }
            if (pos < s.Length && (s[pos] == 'e' || s[pos] == 'E'))
            {
                pos++;
                if (pos < s.Length && (s[pos] == '+' || s[pos] == '-')) pos++;
                if (pos >= s.Length || !IsDigit(s[pos])) return Fail("a number needs a digit in its exponent");
                while (pos < s.Length && IsDigit(s[pos])) pos++;
            }
            if (!build) return JsonValue.Null;
            double d = JsonNumbers.Parse(s, start, pos);
            return JsonValue.ParsedNumber(d);
        }

        static bool IsDigit(char c)
        {
            return c >= '0' && c <= '9';
        }

        static int HexDigit(char c)
        {
            if (c >= '0' && c <= '9') return c - '0';
            if (c >= 'a' && c <= 'f') return c - 'a' + 10;
            if (c >= 'A' && c <= 'F') return c - 'A' + 10;
            return -1;
        }

        static string Describe(char c)
        {
            if (c < ' ' || c > '~') return "U+" + ((int)c).ToString("X4", CultureInfo.InvariantCulture);
            return "'" + c + "'";
        }
    }
}
