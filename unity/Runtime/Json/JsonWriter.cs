using System;
using System.Collections.Generic;
using System.Globalization;
using System.Text;

namespace Rcadia.Agent
{
    /// <summary>
    /// Compact JSON in the form JSON.stringify writes it, so the C# SDK's messages look like
    /// the JS SDK's. The caller nests Begin/End calls correctly; the writer only places commas.
    /// </summary>
    internal sealed class JsonWriter
    {
        readonly StringBuilder sb = new StringBuilder();
        // One entry per open container: true until its first element is written.
        readonly Stack<bool> first = new Stack<bool>();
        bool afterName;

        public override string ToString()
        {
            return sb.ToString();
        }

        public JsonWriter BeginObject()
        {
            BeforeValue();
            sb.Append('{');
            first.Push(true);
            return this;
        }

        public JsonWriter EndObject()
        {
            first.Pop();
            sb.Append('}');
            return this;
        }

        public JsonWriter BeginArray()
        {
            BeforeValue();
            sb.Append('[');
            first.Push(true);
            return this;
        }

        public JsonWriter EndArray()
        {
            first.Pop();
            sb.Append(']');
            return this;
        }

        public JsonWriter Name(string name)
        {
            BeforeValue();
            AppendString(sb, name);
            sb.Append(':');
            afterName = true;
            return this;
        }

        public JsonWriter String(string value)
        {
            BeforeValue();
            if (value == null) sb.Append("null");
            else AppendString(sb, value);
            return this;
        }

        public JsonWriter Number(double value)
        {
            BeforeValue();
            sb.Append(FormatNumber(value));
            return this;
        }

        public JsonWriter Integer(long value)
        {
            BeforeValue();
            sb.Append(value.ToString(CultureInfo.InvariantCulture));
            return this;
        }

        public JsonWriter Boolean(bool value)
        {
            BeforeValue();
            sb.Append(value ? "true" : "false");
            return this;
        }

        public JsonWriter Null()
        {
            BeforeValue();
            sb.Append("null");
            return this;
        }

        /// <summary>
        /// Splices text already known to be one valid JSON value. Lone surrogates (possible only
        /// inside its strings) are escaped, so the text survives conversion to UTF-8 on its way
        /// to the browser.
        /// </summary>
        public JsonWriter RawValidated(string text, int start, int length)
        {
            BeforeValue();
            int end = start + length;
            int copied = start;
            for (int i = start; i < end; i++)
            {
                char c = text[i];
                if (!char.IsSurrogate(c)) continue;
                if (char.IsHighSurrogate(c) && i + 1 < end && char.IsLowSurrogate(text[i + 1]))
                {
                    i++;
                    continue;
                }
                sb.Append(text, copied, i - copied);
                AppendUnicodeEscape(sb, c);
                copied = i + 1;
            }
            sb.Append(text, copied, end - copied);
            return this;
        }

        void BeforeValue()
        {
            if (afterName)
            {
                afterName = false;
                return;
            }
            if (first.Count == 0) return;
            if (first.Peek())
            {
                first.Pop();
                first.Push(false);
            }
            else
            {
                sb.Append(',');
            }
        }

        /// <summary>A string literal as JSON.stringify writes it.</summary>
        public static void AppendString(StringBuilder sb, string s)
        {
            sb.Append('"');
            int copied = 0;
            for (int i = 0; i < s.Length; i++)
            {
                char c = s[i];
                string escape = null;
                bool unicode = false;
                switch (c)
                {
                    case '"': escape = "\\\""; break;
                    case '\\': escape = "\\\\"; break;
                    case '\b': escape = "\\b"; break;
                    case '\f': escape = "\\f"; break;
                    case '\n': escape = "\\n"; break;
                    case '\r': escape = "\\r"; break;
                    case '\t': escape = "\\t"; break;
                    default:
                        if (c < ' ')
                        {
                            unicode = true;
                        }
                        else if (char.IsSurrogate(c))
                        {
                            if (char.IsHighSurrogate(c) && i + 1 < s.Length && char.IsLowSurrogate(s[i + 1]))
                            {
                                i++;
                                continue;
                            }
                            unicode = true; // a lone surrogate, escaped as well-formed JSON.stringify does
                        }
                        break;
                }
                if (escape == null && !unicode) continue;
                sb.Append(s, copied, i - copied);
                if (unicode) AppendUnicodeEscape(sb, c);
                else sb.Append(escape);
                copied = i + 1;
            }
            sb.Append(s, copied, s.Length - copied);
            sb.Append('"');
        }

        static void AppendUnicodeEscape(StringBuilder sb, char c)
        {
            sb.Append("\\u");
            sb.Append(((int)c).ToString("x4", CultureInfo.InvariantCulture));
        }

        /// <summary>
        /// A number as JavaScript's Number.prototype.toString prints it: the fewest digits
        /// that read back as the same double, in full below 1e21 and from 1e-6, with an
        /// exponent (1e+21, 1.5e-7) beyond. NaN and infinities are null, as in JSON.stringify.
        /// </summary>
        public static string FormatNumber(double d)
        {
            if (double.IsNaN(d) || double.IsInfinity(d)) return "null";
            if (d == 0) return "0"; // also -0, as JavaScript prints it
            const double exactIntegers = 9007199254740992.0; // 2^53
            if (d == Math.Floor(d) && Math.Abs(d) < exactIntegers)
                return ((long)d).ToString(CultureInfo.InvariantCulture);
            return JsonNumbers.Format(d);
        }
    }
}
