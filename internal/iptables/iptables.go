// Package iptables builds the commands that change a host's firewall: each
// change is one command run on the host (argv for sh), whose rules go in
// through iptables-restore --noflush, so they take effect together or not
// at all and cost one round trip to a remote machine, however many there
// are. The rules of other software on the host are left as they are.
package iptables

import (
	"strings"
)

// Rule is one rule's match and target, as iptables takes them after the
// chain ("-s", "198.18.0.2", "-j", "DROP").
type Rule []string

// Jump is the rule sending a hook's packets to chain.
func Jump(chain string) Rule { return Rule{"-j", chain} }

// Append returns the command that appends rules to chain in table (made
// when missing) and jumps to chain from each of hooks that does not jump
// there yet (inserted first): the rules and the jumps take effect together.
func Append(table, chain string, rules []Rule, hooks ...string) []string {
	return []string{"sh", "-c", appendScript, "sh", table, chain, batch("-A", chain, rules), strings.Join(hooks, " ")}
}

// appendScript: $1 table, $2 chain, $3 its rules as iptables-restore
// lines, $4 the hooks to jump from.
const appendScript = `set -e
iptables -w -t "$1" -S | grep -qxF -- "-N $2" || iptables -w -t "$1" -N "$2"
jumps=
for h in $4; do
	iptables -w -t "$1" -C "$h" -j "$2" 2>/dev/null || jumps="$jumps-I $h -j $2
"
done
printf '*%s\n%s%sCOMMIT\n' "$1" "$3" "$jumps" | iptables-restore -w --noflush`

// Replace returns the command that replaces every rule of chain in table
// (which exists) with rules, in one transaction: no packet meets the
// chain empty or half written.
func Replace(table, chain string, rules []Rule) []string {
	return []string{"sh", "-c", `printf '%s' "$1" | iptables-restore -w --noflush`, "sh", "*" + table + "\n-F " + quote(chain) + "\n" + batch("-A", chain, rules) + "COMMIT\n"}
}

// Delete returns the command that deletes rules (one instance each) from
// chain in table, together: when one is not there, none is deleted.
func Delete(table, chain string, rules []Rule) []string {
	return []string{"sh", "-c", `printf '%s' "$1" | iptables-restore -w --noflush`, "sh", "*" + table + "\n" + batch("-D", chain, rules) + "COMMIT\n"}
}

// Remove returns the command that takes chain out of table: every jump to
// it from hooks, its rules, the chain itself. A host without the chain
// has nothing to remove.
func Remove(table, chain string, hooks ...string) []string {
	return []string{"sh", "-c", removeScript, "sh", table, chain, strings.Join(hooks, " ")}
}

// removeScript: $1 table, $2 chain, $3 the hooks that may jump to it.
const removeScript = `set -e
rules=$(iptables -w -t "$1" -S)
printf '%s\n' "$rules" | grep -qxF -- "-N $2" || exit 0
for h in $3; do
	while iptables -w -t "$1" -C "$h" -j "$2" 2>/dev/null; do iptables -w -t "$1" -D "$h" -j "$2"; done
done
iptables -w -t "$1" -F "$2"
iptables -w -t "$1" -X "$2"`

// batch is rules as iptables-restore lines, each op ("-A", "-D") on chain.
func batch(op, chain string, rules []Rule) string {
	var b strings.Builder
	for _, r := range rules {
		b.WriteString(op + " " + quote(chain))
		for _, w := range r {
			b.WriteString(" " + quote(w))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// quote makes w one word of an iptables-restore line: as it is when it has
// no space or quote, else in double quotes (iptables-restore reads \" and
// \\ inside them as the character).
func quote(w string) string {
	if w != "" && !strings.ContainsAny(w, " \t\n\"'\\") {
		return w
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", " ").Replace(w) + `"`
}
