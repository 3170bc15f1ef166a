// A small JSON reader for the spec vectors: numbers stay text, so 64-bit
// unsigned values (2^64-1 in the saturation vectors) are read exactly.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.Text;

namespace Dev.KeepTime.Tests
{
    internal sealed class Json
    {
        public enum Kind { Null, Bool, Number, String, Array, Object }
        public Kind Type;
        public string Text;            // Number, String
        public bool Bool;
        public List<Json> Items;       // Array
        public Dictionary<string, Json> Fields; // Object

        public Json this[string key] { get { Json v; return Fields != null && Fields.TryGetValue(key, out v) ? v : null; } }
        public bool Has(string key) { return Fields != null && Fields.ContainsKey(key); }
        public ulong U64 { get { if (Type != Kind.Number) throw new FormatException("not a number"); return ulong.Parse(Text, NumberStyles.None, CultureInfo.InvariantCulture); } }

        /// <summary>This value written back as JSON text (numbers as they were read).</summary>
        public string ToJson()
        {
            var sb = new StringBuilder();
            Write(sb);
            return sb.ToString();
        }

        private void Write(StringBuilder sb)
        {
            switch (Type)
            {
                case Kind.Null: sb.Append("null"); break;
                case Kind.Bool: sb.Append(Bool ? "true" : "false"); break;
                case Kind.Number: sb.Append(Text); break;
                case Kind.String: WriteString(sb, Text); break;
                case Kind.Array:
                    sb.Append('[');
                    for (int i = 0; i < Items.Count; i++) { if (i > 0) sb.Append(','); Items[i].Write(sb); }
                    sb.Append(']');
                    break;
                default:
                    sb.Append('{');
                    bool first = true;
                    foreach (var kv in Fields)
                    {
                        if (!first) sb.Append(',');
                        first = false;
                        WriteString(sb, kv.Key);
                        sb.Append(':');
                        kv.Value.Write(sb);
                    }
                    sb.Append('}');
                    break;
            }
        }

        private static void WriteString(StringBuilder sb, string s)
        {
            sb.Append('"');
            foreach (char c in s)
            {
                if (c == '"' || c == '\\') sb.Append('\\').Append(c);
                else if (c < ' ') sb.Append("\\u").Append(((int)c).ToString("x4", CultureInfo.InvariantCulture));
                else sb.Append(c);
            }
            sb.Append('"');
        }

        public static Json Parse(string s) { int i = 0; Json v = Value(s, ref i); Ws(s, ref i); if (i != s.Length) throw new FormatException("trailing text at " + i); return v; }

        private static void Ws(string s, ref int i) { while (i < s.Length && char.IsWhiteSpace(s[i])) i++; }

        private static Json Value(string s, ref int i)
        {
            Ws(s, ref i);
            char c = s[i];
            if (c == '{')
            {
                var o = new Json { Type = Kind.Object, Fields = new Dictionary<string, Json>() };
                i++; Ws(s, ref i);
                if (s[i] == '}') { i++; return o; }
                while (true)
                {
                    Ws(s, ref i);
                    string k = Str(s, ref i);
                    Ws(s, ref i); Expect(s, ref i, ':');
                    o.Fields[k] = Value(s, ref i);
                    Ws(s, ref i);
                    if (s[i] == ',') { i++; continue; }
                    Expect(s, ref i, '}'); return o;
                }
            }
            if (c == '[')
            {
                var a = new Json { Type = Kind.Array, Items = new List<Json>() };
                i++; Ws(s, ref i);
                if (s[i] == ']') { i++; return a; }
                while (true)
                {
                    a.Items.Add(Value(s, ref i));
                    Ws(s, ref i);
                    if (s[i] == ',') { i++; continue; }
                    Expect(s, ref i, ']'); return a;
                }
            }
            if (c == '"') return new Json { Type = Kind.String, Text = Str(s, ref i) };
            if (s.Substring(i).StartsWith("true")) { i += 4; return new Json { Type = Kind.Bool, Bool = true }; }
            if (s.Substring(i).StartsWith("false")) { i += 5; return new Json { Type = Kind.Bool, Bool = false }; }
            if (s.Substring(i).StartsWith("null")) { i += 4; return new Json { Type = Kind.Null }; }
            int start = i;
            while (i < s.Length && "+-0123456789.eE".IndexOf(s[i]) >= 0) i++;
            if (i == start) throw new FormatException("unexpected '" + c + "' at " + i);
            return new Json { Type = Kind.Number, Text = s.Substring(start, i - start) };
        }

        private static void Expect(string s, ref int i, char c)
        {
            if (s[i] != c) throw new FormatException("expected '" + c + "' at " + i);
            i++;
        }

        private static string Str(string s, ref int i)
        {
            Expect(s, ref i, '"');
            var sb = new StringBuilder();
            while (s[i] != '"')
            {
                if (s[i] == '\\')
                {
                    i++;
                    char e = s[i];
                    if (e == 'u') { sb.Append((char)Convert.ToInt32(s.Substring(i + 1, 4), 16)); i += 5; continue; }
                    sb.Append(e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e == 'b' ? '\b' : e == 'f' ? '\f' : e);
                    i++;
                    continue;
                }
                sb.Append(s[i++]);
            }
            i++;
            return sb.ToString();
        }
    }
}
