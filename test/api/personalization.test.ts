import { describe, expect, it } from 'vitest';
import {
  compileTemplate,
  missingRequiredTags,
  REQUIRED_TAGS,
  validateTemplates,
  type RenderValues,
  type TagProblem,
  type TemplatePart,
} from '../../src/service/mailings/personalization.js';

const FIELDS = ['first_name', 'last_name', 'city', 'interests', 'vip', 'age', 'score'];

const member = (fields: Record<string, unknown> = {}, over: Partial<RenderValues> = {}): RenderValues => ({
  email: 'ada@example.com',
  member_id: 42,
  fields,
  mailing_id: 7,
  optout_url: 'https://x.test/o?m=42&t=abc',
  webview_url: 'https://x.test/w/7',
  ...over,
});

const ADA = member({ first_name: 'Ada', last_name: 'Lovelace', city: 'Oslo', interests: ['golf', 'chess'], vip: true, age: 36 });

const render = (text: string, values: RenderValues = ADA, escapeHtml = false) => compileTemplate(text, { escapeHtml })(values);

type Parts = Partial<Record<TemplatePart, string | null | undefined>>;
const check = (parts: Parts, fieldNames: Iterable<string> = FIELDS) => validateTemplates(parts, { fieldNames });
const problem = (part: TemplatePart, line: number, column: number, tag: string, reason: string): TagProblem => ({
  part,
  tag,
  line,
  column,
  reason,
});

// ------------------------------------------------------------------ rendering

describe('rendering', () => {
  it('text without tags is kept as written, a lone [ or %] included', () => {
    const text = '50% off [sale] %] ends [ soon %]\r\n<p>100%</p>';
    expect(render(text)).toBe(text);
    expect(render('')).toBe('');
  });

  it('renders every output tag', () => {
    expect(
      render('[% member:first_name %] [% member:email %] [% member:member_id %] [% mailing_id %] [% optout_url %] [% webview_url %]'),
    ).toBe('Ada ada@example.com 42 7 https://x.test/o?m=42&t=abc https://x.test/w/7');
  });

  it('whitespace inside a tag is free, line breaks included', () => {
    expect(render('[%member:first_name%]|[%   member : first_name   |  default : "x"  %]|[%\n\tmember:first_name\r\n%]')).toBe(
      'Ada|Ada|Ada',
    );
  });

  it('field names, built-ins, system tags and keywords are case-insensitive', () => {
    const values = member({ First_Name: 'Ada', CITY: 'Oslo' });
    expect(render('[% MEMBER:FIRST_NAME %] [% Member:first_NAME %] [% member:city %] [% member:EMAIL %] [% OPTOUT_URL %]', values)).toBe(
      'Ada Ada Oslo ada@example.com https://x.test/o?m=42&t=abc',
    );
    expect(render('[% IF member:City == "Oslo" %]yes[% ELSE %]no[% END %]', values)).toBe('yes');
  });

  it('one renderer serves members whose field keys are spelled differently', () => {
    const hello = compileTemplate('Hi [% member:first_name %]');
    expect(hello(member({ First_Name: 'A' }))).toBe('Hi A');
    expect(hello(member({ first_name: 'B' }))).toBe('Hi B');
    expect(hello(member({}))).toBe('Hi ');
    expect(hello(member({ FIRST_NAME: 'C' }))).toBe('Hi C');
  });

  it('a field named like an Object property is looked up on the member only', () => {
    const t = '[[% member:constructor %]][[% member:toString %]]';
    expect(render(t, member({}))).toBe('[][]');
    expect(render(t, member({ constructor: 'c', ToString: 't' }))).toBe('[c][t]');
  });

  it('a missing, null or empty value renders as "" or as the default', () => {
    const plain = compileTemplate('Hi [% member:first_name %]!');
    const kind = compileTemplate('Hi [% member:first_name | default:"friend" %]!');
    for (const fields of [{}, { first_name: null }, { first_name: '' }, { first_name: [] }, { first_name: [null, ''] }]) {
      expect(plain(member(fields))).toBe('Hi !');
      expect(kind(member(fields))).toBe('Hi friend!');
    }
    expect(kind(member({ first_name: 'Ada' }))).toBe('Hi Ada!');
  });

  it('false and 0 are values, not blanks: the default is not used', () => {
    const t = '[% member:vip | default:"?" %] [% member:age | default:"?" %]';
    expect(render(t, member({ vip: false, age: 0 }))).toBe('false 0');
  });

  it('a default may hold escaped quotes and backslashes; other backslashes are literal', () => {
    expect(render(String.raw`[% member:nope | default:"say \"hi\" \\ C:\path" %]`)).toBe(String.raw`say "hi" \ C:\path`);
  });

  it('chained defaults: the first non-empty one shows', () => {
    expect(render('[% member:nope | default:"" | default:"b" %]')).toBe('b');
    expect(render('[% member:nope | default:"a" | default:"b" %]')).toBe('a');
  });

  it('values render as text: lists joined by ", ", booleans, numbers as written', () => {
    const values = member({ interests: ['golf', 'chess', 'go'], vip: true, off: false, age: 36, score: 12.5, neg: -3, date: '2026-01-02' });
    expect(
      render(
        '[% member:interests %]|[% member:vip %]|[% member:off %]|[% member:age %]|[% member:score %]|[% member:neg %]|[% member:date %]',
        values,
      ),
    ).toBe('golf, chess, go|true|false|36|12.5|-3|2026-01-02');
    expect(render('[% member:interests %]', member({ interests: ['a', null, '', 'b'] }))).toBe('a, b');
    expect(render('[% member:interests %]', member({ interests: ['only'] }))).toBe('only');
  });

  it('keeps characters outside the BMP intact', () => {
    expect(render('Hej 😀 [% member:first_name %] 😀', member({ first_name: 'Åsa 🎉' }))).toBe('Hej 😀 Åsa 🎉 😀');
  });

  it('escapeHtml escapes values, system tag URLs included, but not template text or defaults', () => {
    const t = '<p title="x">[% member:first_name %] & <a href="[% optout_url %]">[% member:nope | default:"<i>friend</i>" %]</a></p>';
    const values = member({ first_name: `<b>"Tom" & 'Jerry'</b>` });
    expect(render(t, values, true)).toBe(
      '<p title="x">&lt;b&gt;&quot;Tom&quot; &amp; &#39;Jerry&#39;&lt;/b&gt; & <a href="https://x.test/o?m=42&amp;t=abc"><i>friend</i></a></p>',
    );
    expect(render(t, values, false)).toBe(
      `<p title="x"><b>"Tom" & 'Jerry'</b> & <a href="https://x.test/o?m=42&t=abc"><i>friend</i></a></p>`,
    );
    expect(render('[% member:interests %]', member({ interests: ['a&b', '<c>'] }), true)).toBe('a&amp;b, &lt;c&gt;');
    expect(render('[% member:first_name %]', member({ first_name: '&&' }), true)).toBe('&amp;&amp;');
    expect(render('[% member:first_name %]', member({ first_name: 'plain' }), true)).toBe('plain');
  });

  it('a compiled template renders many members independently', () => {
    const t = compileTemplate('[% member:member_id %]:[% member:first_name | default:"-" %];');
    const out = [1, 2, 3].map((i) => t(member(i === 2 ? {} : { first_name: `n${i}` }, { member_id: i }))).join('');
    expect(out).toBe('1:n1;2:-;3:n3;');
  });
});

describe('conditionals', () => {
  it('bare truthiness: present values are true, blanks and false are not', () => {
    const t = compileTemplate('[% if member:v %]yes[% else %]no[% end %]');
    const cases: [unknown, string][] = [
      ['x', 'yes'],
      ['false', 'yes'],
      [0, 'yes'],
      [true, 'yes'],
      [['a'], 'yes'],
      ['', 'no'],
      [null, 'no'],
      [undefined, 'no'],
      [[], 'no'],
      [false, 'no'],
    ];
    for (const [v, want] of cases) expect([v, t(member(v === undefined ? {} : { v }))]).toEqual([v, want]);
  });

  it('== and != against a quoted string compare the rendered value exactly', () => {
    const t = compileTemplate('[% if member:city == "Oslo" %]=[% end %][% if member:city != "Oslo" %]![% end %]');
    expect(t(member({ city: 'Oslo' }))).toBe('=');
    expect(t(member({ city: 'oslo' }))).toBe('!');
    expect(t(member({ city: 'Bergen' }))).toBe('!');
    expect(t(member({}))).toBe('!');
    expect(render('[% if member:city == "" %]blank[% end %]', member({ city: null }))).toBe('blank');
    expect(render('[% if member:city != "" %]set[% end %]', member({}))).toBe('');
    expect(render('[% if member:vip == "true" %]vip[% end %]', member({ vip: true }))).toBe('vip');
    expect(render('[% if member:age == "36" %]36[% end %]', member({ age: 36 }))).toBe('36');
    expect(render(String.raw`[% if member:q == "a \"b\"" %]quoted[% end %]`, member({ q: 'a "b"' }))).toBe('quoted');
  });

  it('== and != against a number compare numerically, numeric strings included', () => {
    const t = compileTemplate('[% if member:age == 36 %]=[% else %]x[% end %][% if member:age != 36 %]![% end %]');
    expect(t(member({ age: 36 }))).toBe('=');
    expect(t(member({ age: '36' }))).toBe('=');
    expect(t(member({ age: '36.0' }))).toBe('=');
    expect(t(member({ age: 37 }))).toBe('x!');
    expect(t(member({ age: 'thirty-six' }))).toBe('x!');
    expect(t(member({}))).toBe('x!');
    expect(render('[% if member:n == 0 %]zero[% end %]', member({ n: '' }))).toBe('');
    expect(render('[% if member:n == 0 %]zero[% end %]', member({ n: 0 }))).toBe('zero');
    expect(render('[% if member:score == 12.5 %]a[% end %][% if member:t == -3 %]b[% end %]', member({ score: 12.5, t: -3 }))).toBe('ab');
  });

  it('on a list, == means "has an item equal to" and != its opposite', () => {
    const t = compileTemplate('[% if member:interests == "golf" %]G[% end %][% if member:interests != "golf" %]n[% end %]');
    expect(t(member({ interests: ['chess', 'golf'] }))).toBe('G');
    expect(t(member({ interests: ['chess'] }))).toBe('n');
    expect(t(member({ interests: [] }))).toBe('n');
    expect(render('[% if member:ids == 3 %]three[% end %]', member({ ids: ['1', '3'] }))).toBe('three');
  });

  it('if / elsif / else picks the first true branch', () => {
    const t = compileTemplate(
      'From [% if member:city == "Oslo" %]the capital[% elsif member:city == "Bergen" %]the west[% elsif member:city %][% member:city %][% else %]nowhere[% end %].',
    );
    expect(t(member({ city: 'Oslo' }))).toBe('From the capital.');
    expect(t(member({ city: 'Bergen' }))).toBe('From the west.');
    expect(t(member({ city: 'Tromsø' }))).toBe('From Tromsø.');
    expect(t(member({}))).toBe('From nowhere.');
  });

  it('an if without else renders nothing when false', () => {
    expect(render('a[% if member:nope %]b[% end %]c')).toBe('ac');
    expect(render('a[% if member:city %]b[% end %]c')).toBe('abc');
  });

  it('nests', () => {
    const t = compileTemplate(
      '[% if member:vip %]V[% if member:city == "Oslo" %]o[% elsif member:city %]c[% else %]-[% end %]![% else %]N[% if member:city %]c[% end %][% end %]',
    );
    expect(t(member({ vip: true, city: 'Oslo' }))).toBe('Vo!');
    expect(t(member({ vip: true, city: 'Bergen' }))).toBe('Vc!');
    expect(t(member({ vip: true }))).toBe('V-!');
    expect(t(member({ vip: false, city: 'Oslo' }))).toBe('Nc');
    expect(t(member({}))).toBe('N');
  });

  it('built-ins and system tags work in conditions; outputs inside branches are escaped', () => {
    expect(render('[% if member:member_id == 42 %]a[% end %][% if mailing_id != 7 %]b[% end %][% if member:email %]c[% end %]')).toBe('ac');
    expect(render('[% if member:city %]<b>[% member:city %]</b>[% end %]', member({ city: 'A&B' }), true)).toBe('<b>A&amp;B</b>');
  });
});

describe('rendering a template that was not validated', () => {
  it('an unterminated tag and a malformed output tag are literal text; an unknown field is missing', () => {
    expect(render('a [% member:x | upcase %] b [% member:nope %]c [% oops')).toBe('a [% member:x | upcase %] b c [% oops');
    expect(render('[% member:first_name [% member:last_name %]')).toBe('[% member:first_name Lovelace');
  });

  it('a malformed condition is false, an unclosed if closes at the end, a stray else/elsif/end is text', () => {
    expect(render('[% if member:city = "Oslo" %]y[% else %]n[% end %]')).toBe('n');
    expect(render('[% if member:city %]open')).toBe('open');
    expect(render('x[% end %][% else %][% elsif member:city %]')).toBe('x[% end %][% else %][% elsif member:city %]');
    expect(render('[% if member:nope %]a[% else %]b[% else %]c[% end %]')).toBe('b[% else %]c');
  });
});

// ------------------------------------------------------------------ validation

describe('validateTemplates', () => {
  it('a valid template has no problems', () => {
    const html = [
      '<p>Hi [% member:first_name | default:"friend" %] [% member:LAST_NAME %] ([% member:email %], #[% member:member_id %])</p>',
      '[% if member:city == "Oslo" %]<p>Oslo</p>[% elsif member:age != 36 %]<p>age</p>',
      '[% elsif member:vip %][% if member:interests == "golf" %]golf[% end %][% else %]none[% end %]',
      '<a href="[% webview_url %]">web</a> <a href="[% optout_url %]">opt out</a> [% mailing_id %] 50% [x] %]',
    ].join('\n');
    expect(check({ subject: 'Hi [% member:first_name %]', html_body: html, plaintext: 'x [% optout_url %]' })).toEqual([]);
    expect(check({})).toEqual([]);
    expect(check({ subject: null, html_body: undefined, plaintext: '' })).toEqual([]);
  });

  it('field names compare case-insensitively; built-ins need no custom field; any iterable works', () => {
    expect(check({ subject: '[% member:FIRST_NAME %][% member:Email %][% member:MEMBER_ID %]' }, ['First_Name'])).toEqual([]);
    expect(check({ subject: '[% member:first_name %]' }, new Map([['FIRST_NAME', 1]]).keys())).toEqual([]);
    function* names() {
      yield 'city';
    }
    expect(check({ subject: '[% if member:CITY %]x[% end %]' }, names())).toEqual([]);
    expect(check({ subject: '[% member:first_name %]' }, [])).toEqual([
      problem('subject', 1, 1, '[% member:first_name %]', 'unknown member field "first_name"'),
    ]);
  });

  // Each problem kind, alone in a subject: [template, reason, tag (default: the template), column (default: 1)], line 1.
  const kinds: [string, string, string?, number?][] = [
    ['[% member:first_name', 'unterminated tag (no closing "%]")'],
    ['[%]', 'unterminated tag (no closing "%]")'],
    ['[% %]', 'empty tag'],
    ['[%%]', 'empty tag'],
    ['[% foo %]', 'unknown tag "foo"'],
    ['[% first_name %]', 'unknown tag "first_name" (did you mean member:first_name?)'],
    ['[% Email %]', 'unknown tag "Email" (did you mean member:email?)'],
    ['[% endif %]', 'unknown tag "endif" (write end)'],
    ['[% elseif member:city %]', 'unknown tag "elseif" (write elsif)'],
    ['[% "hi" %]', 'unexpected string "hi" at the start of the tag'],
    ['[% member:frist_name %]', 'unknown member field "frist_name"'],
    ['[% member %]', 'expected ":" after "member", as in member:first_name'],
    ['[% member first_name %]', 'expected ":" after "member", as in member:first_name'],
    ['[% member: %]', 'missing field name after "member:"'],
    ['[% member:5 %]', 'invalid field name "5"'],
    ['[% member:first-name %]', 'unexpected "-"'],
    ['[% member:first_name ; %]', 'unexpected ";"'],
    ['[% member:first_name member:last_name %]', 'unexpected "member"'],
    ['[% optout_url:x %]', 'unexpected ":"'],
    ['[% member:first_name | default %]', 'default needs a quoted string, as in default:"friend"'],
    ['[% member:first_name | default: %]', 'default needs a quoted string, as in default:"friend"'],
    ['[% member:first_name | default:friend %]', 'default needs a quoted string, as in default:"friend"'],
    ['[% member:first_name | default:5 %]', 'default needs a quoted string, as in default:"friend"'],
    ['[% member:first_name | default:"friend %]', 'unterminated quoted string'],
    [String.raw`[% member:first_name | default:"friend\" %]`, 'unterminated quoted string'],
    ['[% member:first_name | upcase %]', 'unknown filter "upcase" (the only filter is default)'],
    ['[% member:first_name | %]', 'missing filter name after "|"'],
    ['[% member:first_name | "x" %]', 'unexpected string "x" after "|"'],
    ['[% if %]x[% end %]', '"if" needs a condition, as in [% if member:city %]', '[% if %]'],
    ['[% if member:city = "Oslo" %]x[% end %]', 'unexpected "=" in condition (compare with ==)', '[% if member:city = "Oslo" %]'],
    ['[% if member:city == %]x[% end %]', '"==" needs a quoted string or a number after it', '[% if member:city == %]'],
    [
      '[% if member:city != member:last_name %]x[% end %]',
      '"!=" needs a quoted string or a number after it',
      '[% if member:city != member:last_name %]',
    ],
    [
      '[% if member:city == "Oslo" "Bergen" %]x[% end %]',
      'unexpected string "Bergen" after the condition',
      '[% if member:city == "Oslo" "Bergen" %]',
    ],
    ['[% if member:city | default:"x" %]x[% end %]', 'unexpected "|" in condition', '[% if member:city | default:"x" %]'],
    ['[% if member:city == "Oslo %]x[% end %]', 'unterminated quoted string', '[% if member:city == "Oslo %]'],
    ['[% if city %]x[% end %]', 'unknown name "city" in condition (did you mean member:city?)', '[% if city %]'],
    ['[% if "x" %]x[% end %]', 'unexpected string "x" in condition', '[% if "x" %]'],
    ['[% if member:city %]x[% end if %]', 'unexpected "if" after "end"', '[% end if %]', 22],
    ['[% else %]', '"else" without an open "if"'],
    ['[% elsif member:city %]', '"elsif" without an open "if"'],
    ['[% end %]', '"end" without an open "if"'],
    ['[% if member:city %]x', '"if" without a matching "[% end %]"', '[% if member:city %]'],
    ['[% if member:city %]a[% else %]b[% else %]c[% end %]', 'a second "else" in the same "if"', '[% else %]', 33],
    [
      '[% if member:city %]a[% else %]b[% elsif member:vip %]c[% end %]',
      '"elsif" after "else" in the same "if"',
      '[% elsif member:vip %]',
      33,
    ],
  ];
  it.each(kinds)('%s → %s', (template, reason, tag = template, column = 1) => {
    expect(check({ subject: template })).toEqual([problem('subject', 1, column, tag, reason)]);
  });

  it('a syntax problem hides the unknown fields of its tag; a keyword tag can have a structure problem besides', () => {
    expect(check({ plaintext: '[% member:nope | upcase %]' })).toEqual([
      problem('plaintext', 1, 1, '[% member:nope | upcase %]', 'unknown filter "upcase" (the only filter is default)'),
    ]);
    expect(check({ plaintext: '[% member:nope | default:"x" %]' })).toEqual([
      problem('plaintext', 1, 1, '[% member:nope | default:"x" %]', 'unknown member field "nope"'),
    ]);
    expect(check({ plaintext: '[% else if member:city %]' })).toEqual([
      problem('plaintext', 1, 1, '[% else if member:city %]', 'unexpected "if" after "else" (write elsif)'),
      problem('plaintext', 1, 1, '[% else if member:city %]', '"else" without an open "if"'),
    ]);
    expect(check({ plaintext: '[% if member:nope == "x" %]' })).toEqual([
      problem('plaintext', 1, 1, '[% if member:nope == "x" %]', 'unknown member field "nope"'),
      problem('plaintext', 1, 1, '[% if member:nope == "x" %]', '"if" without a matching "[% end %]"'),
    ]);
  });

  it('an unterminated tag ends where the next [% starts, and the next tag is read normally', () => {
    expect(check({ subject: 'Hi [% member:first_name , [% member:nope %] [% if member:city %][% member:city ] [% end %]' })).toEqual([
      problem('subject', 1, 4, '[% member:first_name ,', 'unterminated tag (no closing "%]")'),
      problem('subject', 1, 27, '[% member:nope %]', 'unknown member field "nope"'),
      problem('subject', 1, 65, '[% member:city ]', 'unterminated tag (no closing "%]")'),
    ]);
  });

  it('an unterminated fragment stops at its line end, drops trailing blanks and is cut after 40 code units', () => {
    expect(check({ plaintext: 'Hi [% member:first_name   \r\nnext line' })).toEqual([
      problem('plaintext', 1, 4, '[% member:first_name', 'unterminated tag (no closing "%]")'),
    ]);
    expect(check({ plaintext: '[% member:first_name | default:"a very long default that never ends' })).toEqual([
      problem('plaintext', 1, 1, '[% member:first_name | default:"a very l…', 'unterminated tag (no closing "%]")'),
    ]);
    // 39 code units, then an emoji (2 code units) across the cut: the pair stays whole, outside.
    expect(check({ plaintext: `[% ${'x'.repeat(36)}😀😀` })).toEqual([
      problem('plaintext', 1, 1, `[% ${'x'.repeat(36)}…`, 'unterminated tag (no closing "%]")'),
    ]);
  });

  it('a text full of [% and no %] reports each one and renders as written', () => {
    const text = 'a[%'.repeat(20_000);
    const problems = check({ plaintext: text });
    expect(problems.length).toBe(20_000);
    expect(problems[0]).toEqual(problem('plaintext', 1, 2, '[%a', 'unterminated tag (no closing "%]")'));
    expect(problems[19_999]).toEqual(problem('plaintext', 1, 59_999, '[%', 'unterminated tag (no closing "%]")'));
    expect(render(text)).toBe(text);
  });

  const HTML = [
    '<html>', // 1
    '  <p>Hi [% member:frist_name %],</p>', // 2: column 9
    '  [% if member:city %]', // 3: column 3, never closed
    '    <p>[% member:city | upcase %]</p>', // 4: column 8
    '  [% else %][% else %]', // 5: second else at column 13
    '  <a href="[% optout_url %]">x</a> [% member:last_name', // 6: unterminated at column 36
    '</html>', // 7
  ];
  const HTML_PROBLEMS = [
    problem('html_body', 2, 9, '[% member:frist_name %]', 'unknown member field "frist_name"'),
    problem('html_body', 3, 3, '[% if member:city %]', '"if" without a matching "[% end %]"'),
    problem('html_body', 4, 8, '[% member:city | upcase %]', 'unknown filter "upcase" (the only filter is default)'),
    problem('html_body', 5, 13, '[% else %]', 'a second "else" in the same "if"'),
    problem('html_body', 6, 36, '[% member:last_name', 'unterminated tag (no closing "%]")'),
  ];

  it('multi-line: problems in position order with line and column from the start of the part', () => {
    expect(check({ html_body: HTML.join('\n') })).toEqual(HTML_PROBLEMS);
  });

  it('CRLF and a lone CR each count as one line break', () => {
    expect(check({ html_body: HTML.join('\r\n') })).toEqual(HTML_PROBLEMS);
    expect(check({ html_body: HTML.join('\r') })).toEqual(HTML_PROBLEMS);
    expect(check({ plaintext: 'a\r\n\r\nb\n\rc [% nope %]' })).toEqual([problem('plaintext', 5, 3, '[% nope %]', 'unknown tag "nope"')]);
  });

  it('a tag spanning lines is reported at its first character and shown as written', () => {
    const text = 'Dear\r\n  [% if\r\n     member:city\r\n     == %]x[% end %]';
    expect(check({ plaintext: text })).toEqual([
      problem('plaintext', 2, 3, '[% if\r\n     member:city\r\n     == %]', '"==" needs a quoted string or a number after it'),
    ]);
  });

  it('columns count UTF-16 code units', () => {
    expect(check({ subject: '😀 é [% nope %]' })).toEqual([problem('subject', 1, 6, '[% nope %]', 'unknown tag "nope"')]);
  });

  it('several parts: subject, then html_body, then plaintext, whatever the key order', () => {
    const problems = check({
      plaintext: 'Bye [% member:nope %]\n[% end %]',
      html_body: HTML.join('\n'),
      subject: 'Hi [% member:first_name | default:friend %] [%',
    });
    expect(problems).toEqual([
      problem('subject', 1, 4, '[% member:first_name | default:friend %]', 'default needs a quoted string, as in default:"friend"'),
      problem('subject', 1, 45, '[%', 'unterminated tag (no closing "%]")'),
      ...HTML_PROBLEMS,
      problem('plaintext', 1, 5, '[% member:nope %]', 'unknown member field "nope"'),
      problem('plaintext', 2, 1, '[% end %]', '"end" without an open "if"'),
    ]);
  });

  it('an unclosed if is listed at its own position, before later problems found earlier', () => {
    expect(check({ subject: '[% if member:city %] [% member:nope %] [% if member:vip %]' })).toEqual([
      problem('subject', 1, 1, '[% if member:city %]', '"if" without a matching "[% end %]"'),
      problem('subject', 1, 22, '[% member:nope %]', 'unknown member field "nope"'),
      problem('subject', 1, 40, '[% if member:vip %]', '"if" without a matching "[% end %]"'),
    ]);
  });
});

// ------------------------------------------------------------------ required tags

describe('required tags', () => {
  it('the opt-out link is required, and is itself a valid tag', () => {
    expect(REQUIRED_TAGS).toEqual(['[% optout_url %]']);
    expect(check({ html_body: REQUIRED_TAGS.join(' '), plaintext: REQUIRED_TAGS.join(' ') }, [])).toEqual([]);
  });

  it('a null or empty body lacks nothing', () => {
    expect(missingRequiredTags(null)).toEqual([]);
    expect(missingRequiredTags(undefined)).toEqual([]);
    expect(missingRequiredTags('')).toEqual([]);
  });

  it('a body without the tag lacks it', () => {
    for (const body of [
      'no link here',
      '[% webview_url %]',
      '[% optouturl %]',
      '[ optout_url ]',
      'optout_url',
      '[% optout_url',
      '[% optout_url | default:"x" %]',
      '[% if optout_url %]x[% end %]',
    ]) {
      expect([body, missingRequiredTags(body)]).toEqual([body, ['[% optout_url %]']]);
    }
  });

  it('any whitespace and letter case of the tag counts', () => {
    for (const body of [
      '<a href="[% optout_url %]">opt out</a>',
      '[%optout_url%]',
      '[%   optout_url \n %]',
      '[%\toptout_url\r\n%]',
      '[% OPTOUT_URL %]',
      'first line\r\nsecond [% Optout_Url %] line',
    ]) {
      expect([body, missingRequiredTags(body)]).toEqual([body, []]);
    }
  });
});
