package script

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
)

// A script is the body of an async function, so that await works at its
// top: it is wrapped in one, called, and the promise it returns is the
// script's answer. The wrapper's head shares the script's first line, so
// that line numbers are the script's own; columns of that line are moved
// back by its length. The last statement, when it is an expression, is
// made the function's return value, as a REPL would show it.

// fileName is the name errors give the script.
const fileName = "script.js"

const (
	head = "(async function(){"
	tail = "\n})()"
	ret  = "return "
)

// source is a script ready to run, and how to map positions in it back
// to the script as written.
type source struct {
	prog *goja.Program
	text string // the script as written
	// The splice of ret before the last expression statement, if any:
	// its line and column in the wrapped text (1-based).
	retLine, retCol int
}

// compile wraps src and compiles it, or returns a syntax error that
// names line:col and the offending text.
func compile(src string) (*source, *Error) {
	wrapped := head + src + tail
	prog, err := parser.ParseFile(nil, fileName, wrapped, 0)
	if err != nil {
		return nil, syntaxError(src, err)
	}
	s := &source{text: src}
	if e := lastExpression(prog); e != nil {
		at := statementStart(wrapped, int(e.Idx0())-1)
		s.retLine, s.retCol = lineCol(wrapped, at)
		wrapped = wrapped[:at] + ret + wrapped[at:]
	}
	s.prog, err = goja.Compile(fileName, wrapped, false)
	if err != nil {
		// The splice made a valid script invalid: a bug of ours, named so.
		return nil, &Error{Code: CodeSyntax, Message: fmt.Sprintf("compiling the script: %v (this is a bug)", err)}
	}
	return s, nil
}

// lastExpression returns the wrapper's last statement when it is an
// expression statement.
func lastExpression(prog *ast.Program) ast.Expression {
	if len(prog.Body) != 1 {
		return nil
	}
	st, ok := prog.Body[0].(*ast.ExpressionStatement)
	if !ok {
		return nil
	}
	call, ok := st.Expression.(*ast.CallExpression)
	if !ok {
		return nil
	}
	fn, ok := call.Callee.(*ast.FunctionLiteral)
	if !ok || fn.Body == nil || len(fn.Body.List) == 0 {
		return nil
	}
	last, ok := fn.Body.List[len(fn.Body.List)-1].(*ast.ExpressionStatement)
	if !ok {
		return nil
	}
	return last.Expression
}

// statementStart returns where the statement whose expression starts at
// off starts: before the parentheses that open it, which the parser does
// not count as the expression's.
func statementStart(text string, off int) int {
	start := off
	for i := off - 1; i >= 0; i-- {
		switch text[i] {
		case '(':
			start = i
		case ' ', '\t', '\n', '\r':
		default:
			return start
		}
	}
	return start
}

// lineCol returns the 1-based line and column of a byte offset of text.
func lineCol(text string, off int) (line, col int) {
	before := text[:off]
	line = strings.Count(before, "\n") + 1
	return line, off - strings.LastIndexByte(before, '\n')
}

// position maps a line and column of the wrapped text to the script's.
func (s *source) position(line, col int) (int, int) {
	if s.retLine == line && col > s.retCol {
		col -= len(ret)
	}
	if line == 1 {
		col -= len(head)
	}
	return line, max(col, 1)
}

// syntaxError describes the first of a parser's errors: where, what, and
// the offending line with a caret under the place.
func syntaxError(src string, err error) *Error {
	e := &Error{Code: CodeSyntax}
	list, ok := err.(parser.ErrorList)
	if !ok || len(list) == 0 {
		e.Message = "syntax error: " + err.Error()
		return e
	}
	first := list[0]
	line, col := first.Position.Line, first.Position.Column
	if line == 1 {
		col -= len(head)
	}
	lines := strings.Split(src, "\n")
	if line > len(lines) { // the wrapper's tail: the script ended early
		line = len(lines)
		col = len(lines[line-1]) + 1
	}
	col = max(col, 1)
	e.Line, e.Col = line, col
	e.Message = fmt.Sprintf("syntax error at line %d:%d: %s%s", line, col, first.Message, excerpt(lines[line-1], col))
	return e
}

// excerpt shows a line of the script with a caret at col, cut to a
// readable width around it.
func excerpt(line string, col int) string {
	const width = 60
	start := 0
	if col > width {
		start = col - width/2
	}
	end := min(len(line), start+width)
	if start > len(line) {
		start = len(line)
	}
	text := strings.TrimRight(line[start:end], "\r")
	pad := strings.Repeat(" ", max(col-1-start, 0))
	return "\n  " + text + "\n  " + pad + "^"
}

// where finds the script's line and column in a goja stack trace
// ("\tat script.js:3:7(12)"): its innermost frame in the script. Parsed
// by hand: the package does no work when it is loaded (no regexp
// compiled at init).
func (s *source) where(stack string) (line, col int, ok bool) {
	for rest := stack; ; {
		i := strings.Index(rest, fileName+":")
		if i < 0 {
			return 0, 0, false
		}
		rest = rest[i+len(fileName)+1:]
		l, after, ok1 := leadingInt(rest)
		if !ok1 || !strings.HasPrefix(after, ":") {
			continue
		}
		c, _, ok2 := leadingInt(after[1:])
		if !ok2 {
			continue
		}
		line, col = s.position(l, c)
		return line, col, true
	}
}

// leadingInt reads the decimal number at the start of s.
func leadingInt(s string) (n int, rest string, ok bool) {
	i := 0
	for i < len(s) && i < 9 && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, s, false
	}
	n, err := strconv.Atoi(s[:i])
	return n, s[i:], err == nil
}
