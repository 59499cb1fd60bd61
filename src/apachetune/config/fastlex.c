/* fastlex: the common path of config/parser.py's lexer and tree builder, in C.
 *
 * parse(text, filename[, words, arglists]) cuts a file's text into logical lines exactly as grammars/httpd.lark's
 * LINE does, types each line as httpd's ap_build_config_sub does, splits words as
 * ap_getword_conf does, and builds the same lossless tree of Blank, Comment, Directive and
 * Section nodes that the Lark path builds. It returns the list of top-level nodes, or None for
 * anything unusual: a syntax error, a first word with quotes or escapes, a section left open at
 * the end of the file, a line too long, nesting too deep. The Python path then parses the file
 * itself, so every error message and every rare rule lives in one place (parser.py), and this
 * file only has to be right about the lines it accepts. tests/test_fastlex.py compares the two
 * trees on the corpus, the fixtures and generated text.
 *
 * Nodes are created without calling their dataclass __init__: each field is a slot (a member
 * descriptor), and configure() records where each slot lives in the object. configure() refuses
 * classes whose fields are not the ones this file sets, and the Python side then stays pure.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

enum field {
    F_FILE, F_LINE, F_COLUMN, F_END_LINE, F_START, F_END, F_PARENT,
    F_NAME, F_ARGS, F_RAW_ARGS, F_JOINED, F_CONTENT_END,
    F_TAG_ARGS, F_CHILDREN, F_OPEN_END_LINE, F_OPEN_END, F_CLOSE_START, F_CLOSE_LINE,
    F_CLOSE_COLUMN, F_CLOSED, F_TEXT, NFIELDS
};

static const char *const FIELD_NAMES[NFIELDS] = {
    "file", "line", "column", "end_line", "start", "end", "parent",
    "name", "args", "raw_args", "joined", "content_end",
    "tag_args", "children", "open_end_line", "open_end", "close_start", "close_line",
    "close_column", "closed", "text",
};

/* The fields of each kind of node, in the dataclass's order (Node's seven first). */
#define NODE_FIELDS F_FILE, F_LINE, F_COLUMN, F_END_LINE, F_START, F_END, F_PARENT
static const int BLANK_FIELDS[] = {NODE_FIELDS, -1};
static const int COMMENT_FIELDS[] = {NODE_FIELDS, F_TEXT, -1};
static const int DIRECTIVE_FIELDS[] = {NODE_FIELDS, F_NAME, F_ARGS, F_JOINED, F_CONTENT_END,
                                       -1};
static const int SECTION_FIELDS[] = {NODE_FIELDS, F_NAME, F_ARGS, F_RAW_ARGS, F_TAG_ARGS, F_CHILDREN,
                                     F_OPEN_END_LINE, F_OPEN_END, F_CLOSE_START, F_CLOSE_LINE,
                                     F_CLOSE_COLUMN, F_CLOSED, -1};

typedef struct {
    PyTypeObject *type;
    Py_ssize_t offset[NFIELDS];
} node_class;

enum kind { K_BLANK, K_COMMENT, K_DIRECTIVE, K_SECTION, NKINDS };
static const int *const KIND_FIELDS[NKINDS] = {BLANK_FIELDS, COMMENT_FIELDS, DIRECTIVE_FIELDS,
                                               SECTION_FIELDS};
static node_class classes[NKINDS];
static int configured;
static PyObject *logical_fn; /* parser._logical: a line with continuations, joined and trimmed */

#define MAX_LOGICAL_LINE (16 * 1024 * 1024 - 1)
#define MAX_NESTING 10000

static int is_ws(Py_UCS4 c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* configure(((cls, ("file", "line", ...)), ...)) with Blank, Comment, Directive, Section in that
 * order: each class's dataclass field names, which must be exactly this file's list. */
static PyObject *configure(PyObject *self, PyObject *args) {
    PyObject *specs, *logical;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!O", &PyTuple_Type, &specs, &logical))
        return NULL;
    if (PyTuple_GET_SIZE(specs) != NKINDS) {
        PyErr_SetString(PyExc_ValueError, "expected Blank, Comment, Directive and Section");
        return NULL;
    }
    configured = 0;
    for (int k = 0; k < NKINDS; k++) {
        PyObject *spec = PyTuple_GET_ITEM(specs, k), *cls, *names;
        if (!PyArg_ParseTuple(spec, "O!O!", &PyType_Type, &cls, &PyTuple_Type, &names))
            return NULL;
        const int *fields = KIND_FIELDS[k];
        Py_ssize_t n = 0;
        while (fields[n] >= 0)
            n++;
        if (PyTuple_GET_SIZE(names) != n) {
            PyErr_Format(PyExc_ValueError, "%s has %zd fields, expected %zd",
                         ((PyTypeObject *)cls)->tp_name, PyTuple_GET_SIZE(names), n);
            return NULL;
        }
        for (int f = 0; f < NFIELDS; f++)
            classes[k].offset[f] = -1;
        for (Py_ssize_t i = 0; i < n; i++) {
            const char *want = FIELD_NAMES[fields[i]];
            PyObject *name = PyTuple_GET_ITEM(names, i);
            if (!PyUnicode_Check(name) || PyUnicode_CompareWithASCIIString(name, want) != 0) {
                PyErr_Format(PyExc_ValueError, "%s: field %zd is not %s",
                             ((PyTypeObject *)cls)->tp_name, i, want);
                return NULL;
            }
            PyObject *descr = PyObject_GetAttr(cls, name);
            if (descr == NULL)
                return NULL;
            int ok = Py_IS_TYPE(descr, &PyMemberDescr_Type) &&
                     ((PyMemberDescrObject *)descr)->d_member->type == T_OBJECT_EX &&
                     !(((PyMemberDescrObject *)descr)->d_member->flags & READONLY);
            if (ok)
                classes[k].offset[fields[i]] = ((PyMemberDescrObject *)descr)->d_member->offset;
            Py_DECREF(descr);
            if (!ok) {
                PyErr_Format(PyExc_ValueError, "%s.%s is not a writable slot",
                             ((PyTypeObject *)cls)->tp_name, want);
                return NULL;
            }
        }
        Py_XSETREF(classes[k].type, (PyTypeObject *)Py_NewRef(cls));
    }
    Py_XSETREF(logical_fn, Py_NewRef(logical));
    configured = 1;
    Py_RETURN_NONE;
}

/* ---- the parse of one file -------------------------------------------------------------- */

typedef struct {
    PyObject *text;  /* the file's text */
    int kind;
    const void *data;
    Py_ssize_t n;
    PyObject *file;  /* the file name, shared by every node */
    PyObject *words; /* a dict shared by the files of one resolve: one string per distinct word */
    PyObject *arglists; /* another: one argument list per distinct argument text (read-only) */
} source;

/* Positions repeat: from field to field (a node's end is the next one's start, end_line is
 * usually line) and from file to file (a thousand vhost files made
 * from one template have the same offsets and line numbers). Every value below SHARED is one
 * int object for the whole process (at most 64 Ki of them, 2 MiB, made as values are first
 * seen): with a distinct int per field, ints were a sixth of a tree. CPython caches 0..256. */
#define SHARED 65536
static PyObject *shared[SHARED];

static PyObject *num(Py_ssize_t value) {
    if (value < 0 || value >= SHARED)
        return PyLong_FromSsize_t(value);
    if (shared[value] == NULL) {
        shared[value] = PyLong_FromSsize_t(value);
        if (shared[value] == NULL)
            return NULL;
    }
    return Py_NewRef(shared[value]);
}

/* A new node of `kind` with Node's fields set; the caller sets the rest. */
static PyObject *new_node(int kind, const source *src, Py_ssize_t line, Py_ssize_t column,
                          Py_ssize_t end_line, Py_ssize_t start, Py_ssize_t end) {
    node_class *k = &classes[kind];
    PyObject *obj = k->type->tp_alloc(k->type, 0);
    if (obj == NULL)
        return NULL;
    PyObject *values[] = {Py_NewRef(src->file), num(line), num(column), num(end_line), num(start),
                          num(end), Py_NewRef(Py_None)};
    int failed = 0;
    for (int f = 0; f < 7; f++) {
        if (values[f] == NULL)
            failed = 1;
        *(PyObject **)((char *)obj + k->offset[f]) = values[f];
    }
    if (failed) {
        Py_DECREF(obj);
        return NULL;
    }
    return obj;
}

/* Set field `f` of `obj` (a node of `kind`) to `value`, stealing the reference; -1 if NULL. */
static int set(PyObject *obj, int kind, int f, PyObject *value) {
    if (value == NULL)
        return -1;
    PyObject **slot = (PyObject **)((char *)obj + classes[kind].offset[f]);
    Py_XSETREF(*slot, value);
    return 0;
}

static int set_int(PyObject *obj, int kind, int f, Py_ssize_t value) {
    return set(obj, kind, f, num(value));
}

#define READ(s, i) PyUnicode_READ((s)->kind, (s)->data, (i))

typedef struct {
    PyObject *obj;  /* where a line's content lives: the file's text, or a joined line */
    int kind;
    const void *data;
} chars;

static void chars_of(chars *c, PyObject *obj) {
    c->obj = obj;
    c->kind = PyUnicode_KIND(obj);
    c->data = PyUnicode_DATA(obj);
}

#define CREAD(c, i) PyUnicode_READ((c)->kind, (c)->data, (i))

/* words.py _unescape: a backslash before a backslash (or before `quote`) is dropped. */
static PyObject *unescape(const chars *c, Py_ssize_t a, Py_ssize_t b, Py_UCS4 quote) {
    Py_ssize_t i;
    for (i = a; i < b && CREAD(c, i) != '\\'; i++)
        ;
    if (i == b)
        return PyUnicode_Substring(c->obj, a, b);
    Py_UCS4 *buf = PyMem_Malloc(sizeof(Py_UCS4) * (size_t)(b - a));
    if (buf == NULL)
        return PyErr_NoMemory();
    Py_ssize_t len = 0;
    for (i = a; i < b;) {
        Py_UCS4 ch = CREAD(c, i);
        if (ch == '\\' && i + 1 < b) {
            Py_UCS4 next = CREAD(c, i + 1);
            if (next == '\\' || (quote && next == quote)) {
                buf[len++] = next;
                i += 2;
                continue;
            }
        }
        buf[len++] = ch;
        i++;
    }
    PyObject *out = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, buf, len);
    PyMem_Free(buf);
    return out;
}

/* `word` (a new reference), or the equal string met before in `table` instead: a 1,000-vhost
 * tree says "None", "-Indexes" and its paths thousands of times, and one copy of each is 1.6x
 * less memory for its arguments. A plain dict, not sys.intern: interned strings live for good. */
static PyObject *one_copy(PyObject *table, PyObject *word) {
    if (table == NULL || word == NULL)
        return word;
    PyObject *seen = PyDict_SetDefault(table, word, word);  /* borrowed */
    Py_XINCREF(seen);
    Py_DECREF(word);
    return seen;
}

/* words.py split_words over [a, b) of `c`: ap_getword_conf, word after word. */
static PyObject *split_words(const chars *c, Py_ssize_t a, Py_ssize_t b, PyObject *table) {
    PyObject *words = PyList_New(0);
    if (words == NULL)
        return NULL;
    Py_ssize_t pos = a;
    while (pos < b && is_ws(CREAD(c, pos)))
        pos++;
    while (pos < b) {
        Py_UCS4 q = CREAD(c, pos);
        PyObject *word;
        if (q == '"' || q == '\'') {
            Py_ssize_t e = pos + 1;
            while (e < b && CREAD(c, e) != q) {
                if (CREAD(c, e) == '\\' && e + 1 < b && (CREAD(c, e + 1) == q || CREAD(c, e + 1) == '\\'))
                    e += 2;
                else
                    e++;
            }
            word = unescape(c, pos + 1, e < b ? e : b, q);
            pos = e < b ? e + 1 : b;
        } else {
            Py_ssize_t e = pos;
            while (e < b && !is_ws(CREAD(c, e)))
                e++;
            word = unescape(c, pos, e, 0);
            pos = e;
        }
        word = one_copy(table, word);
        if (word == NULL || PyList_Append(words, word) < 0) {
            Py_XDECREF(word);
            Py_DECREF(words);
            return NULL;
        }
        Py_DECREF(word);
        while (pos < b && is_ws(CREAD(c, pos)))
            pos++;
    }
    Py_ssize_t n = PyList_GET_SIZE(words);
    if (n && ((PyListObject *)words)->allocated != n) {  /* kept for good: no spare room */
        PyObject *exact = PyList_GetSlice(words, 0, n);
        Py_SETREF(words, exact);
    }
    return words;
}

typedef struct {
    PyObject *section;   /* borrowed: owned by its parent's children */
    PyObject *children;  /* borrowed: owned by the section */
} level;

typedef struct {
    level *levels;
    Py_ssize_t depth, cap;
} stack;

/* Append `node` (a new reference, stolen) to the innermost open level, its parent set. */
static int adopt(stack *st, PyObject *top, PyObject *node, int kind) {
    PyObject *list = top;
    if (st->depth) {
        level *in = &st->levels[st->depth - 1];
        list = in->children;
        if (set(node, kind, F_PARENT, Py_NewRef(in->section)) < 0) {
            Py_DECREF(node);
            return -1;
        }
    }
    int rc = PyList_Append(list, node);
    Py_DECREF(node);
    return rc;
}

/* ASCII case-insensitive equality of [a, b) of `c` with `name`; -1: not ASCII (let Python say). */
static int same_name(const chars *c, Py_ssize_t a, Py_ssize_t b, PyObject *name) {
    if (!PyUnicode_IS_ASCII(name))
        return -1;
    if (PyUnicode_GET_LENGTH(name) != b - a)
        return 0;
    const Py_UCS1 *s = PyUnicode_1BYTE_DATA(name);
    for (Py_ssize_t i = 0; i < b - a; i++) {
        Py_UCS4 x = CREAD(c, a + i), y = s[i];
        if (x >= 128)
            return -1;
        if (x >= 'A' && x <= 'Z')
            x += 'a' - 'A';
        if (y >= 'A' && y <= 'Z')
            y += 'a' - 'A';
        if (x != y)
            return 0;
    }
    return 1;
}

/* One logical line's facts, as the Python lexer computes them. */
typedef struct {
    Py_ssize_t start, end;             /* the raw line's span in the text */
    Py_ssize_t first_line, last_line;
    Py_ssize_t line, column, lead;     /* where its first non-blank character is */
    chars content;                      /* its content: [c0, c1) of content.obj */
    Py_ssize_t c0, c1;
} logical_line;

enum { OK = 0, FAIL = -1, BAIL = 1 };

static PyObject *sub(const chars *c, Py_ssize_t a, Py_ssize_t b) {
    return PyUnicode_Substring(c->obj, a, b);
}

/* The words of [a, b) of `c`, whose text is `raw`. Lines repeat from vhost to vhost ("Options
 * -Indexes", "AllowOverride None"), and one list per distinct text, in `src->arglists`, is a
 * fifth of a tree's memory saved; nothing changes a parsed node's arguments. */
static PyObject *arguments(const source *src, const chars *c, Py_ssize_t a, Py_ssize_t b,
                           PyObject *raw) {
    if (raw == NULL)
        return NULL;
    if (src->arglists != NULL) {
        PyObject *seen = PyDict_GetItemWithError(src->arglists, raw);  /* borrowed */
        if (seen != NULL || PyErr_Occurred())
            return Py_XNewRef(seen);
    }
    PyObject *args = split_words(c, a, b, src->words);
    if (args == NULL)
        return NULL;
    if (src->words == NULL && PyList_GET_SIZE(args) == 1 &&
        PyUnicode_Compare(PyList_GET_ITEM(args, 0), raw) == 0)
        PyList_SetItem(args, 0, Py_NewRef(raw));  /* one plain word: share the string */
    if (src->arglists != NULL && PyDict_SetItem(src->arglists, raw, args) < 0)
        Py_CLEAR(args);
    return args;
}

static int directive(const source *src, stack *st, PyObject *top, const logical_line *l,
                     PyObject *name, Py_ssize_t rest) {
    const chars *c = &l->content;
    Py_ssize_t tail = l->end;  /* after the raw line's last non-blank character */
    while (tail > l->start && is_ws(READ(src, tail - 1)))
        tail--;
    PyObject *node = new_node(K_DIRECTIVE, src, l->line, l->column, l->last_line, l->start, l->end);
    if (node == NULL)
        return FAIL;
    PyObject *raw_args = sub(c, rest, l->c1);
    PyObject *args = arguments(src, c, rest, l->c1, raw_args);
    if (args == NULL) {
        Py_XDECREF(raw_args);
        Py_DECREF(node);
        return FAIL;
    }
    set(node, K_DIRECTIVE, F_NAME, Py_NewRef(name));
    set(node, K_DIRECTIVE, F_ARGS, args);
    /* A line read from the file's own text keeps no copy of its arguments: Directive.raw_args
     * reads them back (the name is as written here: a quoted or escaped one goes to Python). */
    if (c->obj == src->text) {
        Py_DECREF(raw_args);
        raw_args = Py_NewRef(Py_None);
    }
    set(node, K_DIRECTIVE, F_JOINED, raw_args);
    if (set_int(node, K_DIRECTIVE, F_CONTENT_END, tail) < 0) {
        Py_DECREF(node);
        return FAIL;
    }
    return adopt(st, top, node, K_DIRECTIVE) < 0 ? FAIL : OK;
}

static int open_section(const source *src, stack *st, PyObject *top, const logical_line *l,
                        Py_ssize_t w0, Py_ssize_t w1, Py_ssize_t rest) {
    const chars *c = &l->content;
    int ends_gt = w1 - w0 > 1 && CREAD(c, w1 - 1) == '>';
    Py_ssize_t cmd_end = ends_gt ? w1 - 1 : w1;
    Py_ssize_t r0 = rest, r1 = rest;  /* raw_args */
    if (!(rest == l->c1 && ends_gt)) {
        Py_ssize_t gt = l->c1 - 1;
        while (gt >= rest && CREAD(c, gt) != '>')
            gt--;
        if (gt < rest)
            return BAIL;  /* "directive missing closing '>'" */
        r1 = gt;
        while (r0 < r1 && is_ws(CREAD(c, r0)))
            r0++;
        while (r1 > r0 && is_ws(CREAD(c, r1 - 1)))
            r1--;
    }
    if (st->depth >= MAX_NESTING)
        return BAIL;
    PyObject *node = new_node(K_SECTION, src, l->line, l->column, l->last_line, l->start, l->end);
    if (node == NULL)
        return FAIL;
    PyObject *name = sub(c, w0 + 1, cmd_end);
    if (name != NULL)
        PyUnicode_InternInPlace(&name);
    PyObject *children = PyList_New(0);
    PyObject *raw_args = one_copy(src->words, sub(c, r0, r1));
    if (set(node, K_SECTION, F_NAME, name) < 0 ||
        set(node, K_SECTION, F_RAW_ARGS, raw_args) < 0 ||  /* owned by the node from here */
        set(node, K_SECTION, F_ARGS, arguments(src, c, r0, r1, raw_args)) < 0 ||
        set(node, K_SECTION, F_TAG_ARGS, one_copy(src->words, sub(c, rest, l->c1))) < 0 ||
        set(node, K_SECTION, F_CHILDREN, children) < 0 ||
        set_int(node, K_SECTION, F_OPEN_END_LINE, l->last_line) < 0 ||
        set_int(node, K_SECTION, F_OPEN_END, l->end) < 0 ||
        set_int(node, K_SECTION, F_CLOSE_START, 0) < 0 ||
        set_int(node, K_SECTION, F_CLOSE_LINE, 0) < 0 ||
        set_int(node, K_SECTION, F_CLOSE_COLUMN, 0) < 0 ||
        set(node, K_SECTION, F_CLOSED, Py_NewRef(Py_True)) < 0) {
        Py_DECREF(node);
        return FAIL;
    }
    if (st->depth == st->cap) {
        Py_ssize_t cap = st->cap ? st->cap * 2 : 16;
        level *grown = PyMem_Realloc(st->levels, sizeof(level) * (size_t)cap);
        if (grown == NULL) {
            Py_DECREF(node);
            PyErr_NoMemory();
            return FAIL;
        }
        st->levels = grown;
        st->cap = cap;
    }
    level lv = {node, children};
    if (adopt(st, top, node, K_SECTION) < 0)  /* the parent's list now owns the section */
        return FAIL;
    st->levels[st->depth++] = lv;
    return OK;
}

static int close_section(const source *src, stack *st, const logical_line *l, Py_ssize_t w0,
                         Py_ssize_t w1) {
    (void)src;
    const chars *c = &l->content;
    if (CREAD(c, w1 - 1) != '>' || w1 - w0 < 3 || st->depth == 0)
        return BAIL;  /* "missing closing '>'", "without matching section" */
    level *in = &st->levels[st->depth - 1];
    PyObject *name = *(PyObject **)((char *)in->section + classes[K_SECTION].offset[F_NAME]);
    if (same_name(c, w0 + 2, w1 - 1, name) != 1)
        return BAIL;  /* "Expected </X> but saw </Y>", or a name Python compares */
    PyObject *s = in->section;
    if (set_int(s, K_SECTION, F_CLOSE_START, l->start) < 0 ||
        set_int(s, K_SECTION, F_CLOSE_LINE, l->line) < 0 ||
        set_int(s, K_SECTION, F_CLOSE_COLUMN, l->column) < 0 ||
        set_int(s, K_SECTION, F_END, l->end) < 0 ||
        set_int(s, K_SECTION, F_END_LINE, l->last_line) < 0)
        return FAIL;
    st->depth--;
    return OK;
}

/* The logical line starting at `pos`: grammars/httpd.lark's LINE, physical lines joined while
 * one ends in a backslash (before an optional CR) and more text follows. Sets *joined when a
 * backslash-newline is inside (the content must then be joined by parser._logical). */
static Py_ssize_t line_end(const source *src, Py_ssize_t pos, int *joined) {
    Py_ssize_t n = src->n;
    *joined = 0;
    for (;;) {
        Py_ssize_t phys = pos;
        while (pos < n && READ(src, pos) != '\n')
            pos++;
        if (pos == n)
            return n;
        Py_ssize_t nl = pos++;
        int backslash = (nl > phys && READ(src, nl - 1) == '\\') ||
                        (nl - 1 > phys && READ(src, nl - 1) == '\r' && READ(src, nl - 2) == '\\');
        if (backslash)
            *joined = 1;
        if (!backslash || pos == n)
            return pos;
    }
}

static int one_line(const source *src, stack *st, PyObject *top, logical_line *l, int joined,
                    PyObject **joined_text) {
    Py_ssize_t ls = l->start;
    while (ls < l->end && is_ws(READ(src, ls)))
        ls++;
    l->lead = ls - l->start;
    if (joined) {
        PyObject *raw = PyUnicode_Substring(src->text, l->start, l->end);
        if (raw == NULL)
            return FAIL;
        *joined_text = PyObject_CallOneArg(logical_fn, raw);
        Py_DECREF(raw);
        if (*joined_text == NULL)
            return FAIL;
        if (!PyUnicode_Check(*joined_text)) {
            PyErr_SetString(PyExc_TypeError, "_logical returned a non-string");
            return FAIL;
        }
        chars_of(&l->content, *joined_text);
        l->c0 = 0;
        l->c1 = PyUnicode_GET_LENGTH(*joined_text);
    } else {
        chars_of(&l->content, src->text);
        l->c0 = ls;
        l->c1 = l->end;
        while (l->c1 > l->c0 && is_ws(READ(src, l->c1 - 1)))
            l->c1--;
    }
    if (l->c0 == l->c1) {
        PyObject *node = new_node(K_BLANK, src, l->first_line, 1, l->last_line, l->start, l->end);
        return node == NULL || adopt(st, top, node, K_BLANK) < 0 ? FAIL : OK;
    }
    if (l->c1 - l->c0 >= MAX_LOGICAL_LINE)
        return BAIL;
    Py_ssize_t nl_before = -1, newlines = 0;
    for (Py_ssize_t i = l->start; i < ls; i++) {
        if (READ(src, i) == '\n') {
            nl_before = i;
            newlines++;
        }
    }
    l->line = l->first_line + newlines;
    l->column = nl_before < 0 ? l->lead + 1 : ls - nl_before;
    const chars *c = &l->content;
    if (CREAD(c, l->c0) == '#') {
        PyObject *node = new_node(K_COMMENT, src, l->line, l->column, l->last_line, l->start, l->end);
        if (node == NULL || set(node, K_COMMENT, F_TEXT, sub(c, l->c0, l->c1)) < 0) {
            Py_XDECREF(node);
            return FAIL;
        }
        return adopt(st, top, node, K_COMMENT) < 0 ? FAIL : OK;
    }
    Py_ssize_t w0 = l->c0, w1 = w0;
    Py_UCS4 first = CREAD(c, w0);
    if (first == '"' || first == '\'')
        return BAIL;  /* a quoted first word: httpd's full rules, in Python */
    while (w1 < l->c1 && !is_ws(CREAD(c, w1))) {
        if (CREAD(c, w1) == '\\')
            return BAIL;
        w1++;
    }
    Py_ssize_t rest = w1;
    while (rest < l->c1 && is_ws(CREAD(c, rest)))
        rest++;
    if (first == '<' && w1 - w0 >= 2 && CREAD(c, w0 + 1) == '/')
        return close_section(src, st, l, w0, w1);
    if (first == '<')
        return open_section(src, st, top, l, w0, w1, rest);
    PyObject *name = sub(c, w0, w1);
    if (name == NULL)
        return FAIL;
    PyUnicode_InternInPlace(&name);
    int rc = directive(src, st, top, l, name, rest);
    Py_DECREF(name);
    return rc;
}

static PyObject *parse(PyObject *self, PyObject *args) {
    source src;
    (void)self;
    src.words = src.arglists = NULL;
    if (!PyArg_ParseTuple(args, "UU|O!O!", &src.text, &src.file, &PyDict_Type, &src.words,
                          &PyDict_Type, &src.arglists))
        return NULL;
    if (!configured) {
        PyErr_SetString(PyExc_RuntimeError, "fastlex.configure() was not called");
        return NULL;
    }
    src.kind = PyUnicode_KIND(src.text);
    src.data = PyUnicode_DATA(src.text);
    src.n = PyUnicode_GET_LENGTH(src.text);
    PyObject *top = PyList_New(0);
    if (top == NULL)
        return NULL;
    stack st = {NULL, 0, 0};
    int rc = OK;
    Py_ssize_t pos = 0, line_no = 1;
    while (pos < src.n && rc == OK) {
        logical_line l;
        int joined;
        l.start = pos;
        l.end = pos = line_end(&src, pos, &joined);
        l.first_line = line_no;
        for (Py_ssize_t i = l.start; i < l.end; i++)
            line_no += READ(&src, i) == '\n';
        l.last_line = line_no - (READ(&src, l.end - 1) == '\n');
        PyObject *joined_text = NULL;
        rc = one_line(&src, &st, top, &l, joined, &joined_text);
        Py_XDECREF(joined_text);
    }
    if (rc == OK && st.depth)
        rc = BAIL;  /* a section open at the end of the file: an error, or a conditional */
    PyMem_Free(st.levels);
    if (rc != OK) {
        Py_DECREF(top);
        if (rc == FAIL)
            return NULL;
        Py_RETURN_NONE;
    }
    return top;
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS, "Tell the module the node classes and parser._logical."},
    {"parse", parse, METH_VARARGS, "The top-level nodes of a file's text, or None: parse in Python."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fastlex", NULL, -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__fastlex(void) {
    return PyModule_Create(&module);
}
