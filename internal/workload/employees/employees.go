// Package employees generates a dataset shaped like MySQL's employees
// sample database (document 001 loads it to run a join-heavy read query
// under mariadb-slap): six tables, about 3.9 million rows at full size,
// made by the server itself from its sequence tables, deterministic (the
// same size gives the same rows), in chunks small enough for a Galera
// write set.
package employees

import (
	"fmt"
	"math"
	"strings"
)

// Schema is the dataset's schema; hadrill marks it as its own with Marker.
const Schema = "employees"

// Marker is the table recording the dataset's size: a schema without it was
// not made by hadrill and is never dropped.
const Marker = "hd_prepared"

// FullEmployees is the employees table's row count at size 1 (the sample
// database's).
const FullEmployees = 300024

// Query is document 001's read test: four tables joined, about half a
// million rows returned at full size, sorted.
const Query = "SELECT e.first_name, e.last_name, d.dept_name, t.title, t.from_date, t.to_date FROM employees e " +
	"INNER JOIN dept_emp de ON e.emp_no=de.emp_no INNER JOIN departments d ON de.dept_no=d.dept_no " +
	"INNER JOIN titles t ON e.emp_no=t.emp_no ORDER BY e.first_name, e.last_name, d.dept_name, t.from_date"

// Chunk is how many employees one INSERT covers (their salaries: about
// 9.5 rows each).
const Chunk = 25000

// MinSize and MaxSize bound a dataset's size (a fraction of the sample's).
const (
	MinSize = 0.01
	MaxSize = 4.0
)

// Employees is the number of employees at a size.
func Employees(size float64) int { return int(math.Round(FullEmployees * size)) }

// Rows estimates the dataset's rows at a size (all six tables).
func Rows(size float64) int {
	n := float64(Employees(size))
	return int(n*(1+1.1+1.48+9.5)) + 9 + 24
}

var departments = []string{"Marketing", "Finance", "Human Resources", "Production", "Development",
	"Quality Management", "Sales", "Research", "Customer Service"}

var titles = []string{"Engineer", "Staff", "Senior Engineer", "Senior Staff", "Assistant Engineer", "Technique Leader", "Manager"}

// Name parts: 40 × 30 first names and 55 × 30 last names, about as many
// distinct ones as the sample has (1,275 and 1,637).
var (
	firstStems = strings.Fields("Al Ber Car Dan El Fer Gi Har Is Jo Ka Le Mar Ni Ol Pa Que Ro Sa Ta Ul Va Wi Xe Ya Za Bo Cle Do Eri Flo Gu He Ire Ju Ki Lu Mo Na Ot")
	lastStems  = strings.Fields("Fac Sim Bam Koblick Mal Pre Zie Peac Tra Sluis Bri Casl Nooteb Gen Erde Bamf Pie Dem Haddad Stam Ros Lenart Port Ces Mand Sch Ham Bier Wald Lun Men Kalo Nyan Garig Hof Wal Stur Aski Mukh Chen Lam Poly Tak Bou Rahi Dema Fris Kuz Maru Riv Sud Yet Zsch Ebe Ito")
	endings    = strings.Fields("a o i e an en in on el er ia io ard ert ine ona ita emi ani ose uel ali ila uda eth ius ova ane ik ul")
)

func sqlList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = "'" + s + "'"
	}
	return strings.Join(q, ",")
}

// Statements creates the dataset at a size, in order: the schema (which
// must not exist), the tables, then the rows in chunks, the marker last
// (so a cut-short load is not taken for a complete one).
func Statements(size float64) []string {
	n := Employees(size)
	first := fmt.Sprintf("CONCAT(ELT(1 + s.seq %% %d, %s), ELT(1 + (s.seq DIV %d) %% %d, %s))",
		len(firstStems), sqlList(firstStems), len(firstStems), len(endings), sqlList(endings))
	last := fmt.Sprintf("CONCAT(ELT(1 + (s.seq * 7) %% %d, %s), ELT(1 + (s.seq DIV %d) %% %d, %s))",
		len(lastStems), sqlList(lastStems), len(lastStems), len(endings), sqlList(endings))
	out := []string{
		"CREATE DATABASE " + Schema,
		"CREATE TABLE employees.employees (emp_no INT NOT NULL, birth_date DATE NOT NULL, first_name VARCHAR(14) NOT NULL, " +
			"last_name VARCHAR(16) NOT NULL, gender ENUM('M','F') NOT NULL, hire_date DATE NOT NULL, PRIMARY KEY (emp_no)) ENGINE=InnoDB",
		"CREATE TABLE employees.departments (dept_no CHAR(4) NOT NULL, dept_name VARCHAR(40) NOT NULL, PRIMARY KEY (dept_no), UNIQUE KEY (dept_name)) ENGINE=InnoDB",
		"CREATE TABLE employees.dept_emp (emp_no INT NOT NULL, dept_no CHAR(4) NOT NULL, from_date DATE NOT NULL, to_date DATE NOT NULL, " +
			"PRIMARY KEY (emp_no, dept_no), KEY (dept_no)) ENGINE=InnoDB",
		"CREATE TABLE employees.dept_manager (emp_no INT NOT NULL, dept_no CHAR(4) NOT NULL, from_date DATE NOT NULL, to_date DATE NOT NULL, " +
			"PRIMARY KEY (emp_no, dept_no), KEY (dept_no)) ENGINE=InnoDB",
		"CREATE TABLE employees.titles (emp_no INT NOT NULL, title VARCHAR(50) NOT NULL, from_date DATE NOT NULL, to_date DATE, " +
			"PRIMARY KEY (emp_no, title, from_date)) ENGINE=InnoDB",
		"CREATE TABLE employees.salaries (emp_no INT NOT NULL, salary INT NOT NULL, from_date DATE NOT NULL, to_date DATE NOT NULL, " +
			"PRIMARY KEY (emp_no, from_date)) ENGINE=InnoDB",
		"CREATE TABLE employees." + Marker + " (size DOUBLE NOT NULL, employees INT NOT NULL) ENGINE=InnoDB",
	}
	var depts []string
	for i, d := range departments {
		depts = append(depts, fmt.Sprintf("('d%03d','%s')", i+1, d))
	}
	out = append(out, "INSERT INTO employees.departments VALUES "+strings.Join(depts, ","))
	for lo := 1; lo <= n; lo += Chunk {
		hi := min(lo+Chunk-1, n)
		// employee k is emp_no 10000 + k; s.seq runs over k
		out = append(out, fmt.Sprintf("INSERT INTO employees.employees SELECT 10000 + s.seq, "+
			"'1952-02-01' + INTERVAL (s.seq * 37) %% 4745 DAY, %s, %s, IF(s.seq %% 5 < 3, 'M', 'F'), "+
			"'1985-01-01' + INTERVAL (s.seq * 53) %% 5110 DAY FROM employees.seq_%d_to_%d s", first, last, lo, hi))
		rng := fmt.Sprintf("WHERE e.emp_no BETWEEN %d AND %d", 10000+lo, 10000+hi)
		// every employee in one department; one in ten moved to a second
		out = append(out, "INSERT INTO employees.dept_emp SELECT e.emp_no, CONCAT('d00', 1 + (e.emp_no * 7) % 9), e.hire_date, "+
			"IF(e.emp_no % 10 = 0, e.hire_date + INTERVAL 1 + e.emp_no % 7 YEAR, '9999-01-01') FROM employees.employees e "+rng,
			"INSERT INTO employees.dept_emp SELECT e.emp_no, CONCAT('d00', 1 + (e.emp_no * 7 + 1) % 9), e.hire_date + INTERVAL 1 + e.emp_no % 7 YEAR, "+
				"'9999-01-01' FROM employees.employees e "+rng+" AND e.emp_no % 10 = 0")
		// every employee a title; about half promoted once
		promoted := "(e.emp_no * 31) % 100 < 48"
		out = append(out, fmt.Sprintf("INSERT INTO employees.titles SELECT e.emp_no, ELT(1 + e.emp_no %% 5, %s), e.hire_date, "+
			"IF(%s, e.hire_date + INTERVAL 2 + e.emp_no %% 9 YEAR, '9999-01-01') FROM employees.employees e %s", sqlList(titles[:5]), promoted, rng),
			fmt.Sprintf("INSERT INTO employees.titles SELECT e.emp_no, ELT(1 + e.emp_no %% 3, %s), e.hire_date + INTERVAL 2 + e.emp_no %% 9 YEAR, "+
				"'9999-01-01' FROM employees.employees e %s AND %s", sqlList(titles[2:]), rng, promoted))
		// a salary a year, 1 to 18 years (9.5 on average)
		out = append(out, "INSERT INTO employees.salaries SELECT e.emp_no, 40000 + (e.emp_no * 101 + y.seq * 3001) % 30000 + y.seq * 1500, "+
			"e.hire_date + INTERVAL y.seq YEAR, IF(y.seq = (e.emp_no * 7919) % 18, '9999-01-01', e.hire_date + INTERVAL y.seq + 1 YEAR) "+
			"FROM employees.employees e JOIN employees.seq_0_to_17 y ON y.seq <= (e.emp_no * 7919) % 18 "+rng)
	}
	// a manager or more per department, from the first employees
	managers := min(24, n)
	out = append(out, fmt.Sprintf("INSERT INTO employees.dept_manager SELECT 10000 + 1 + (s.seq - 1) * %d, CONCAT('d00', 1 + s.seq %% 9), "+
		"'1986-01-01' + INTERVAL s.seq YEAR, IF(s.seq > 15, '9999-01-01', '1986-01-01' + INTERVAL s.seq + 5 YEAR) FROM employees.seq_1_to_%d s",
		max(n/managers, 1), managers))
	out = append(out, fmt.Sprintf("INSERT INTO employees.%s VALUES (%g, %d)", Marker, size, n))
	return out
}
