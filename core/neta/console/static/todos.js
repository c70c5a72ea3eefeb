// The live plan: the session's todo list, replaced whole on every todo_update.

const MARKS = { pending: "○", in_progress: "◐", completed: "✓", cancelled: "✕" };
const LABELS = { pending: "pending", in_progress: "in progress", completed: "done", cancelled: "cancelled" };

export class TodoPanel {
  constructor(list, counts, empty) {
    this.list = list;
    this.counts = counts;
    this.empty = empty;
  }

  show(todos) {
    const items = Array.isArray(todos) ? todos : [];
    const rows = items.map((todo) => {
      const status = String(todo.status ?? "pending");
      const row = document.createElement("li");
      row.className = "todo";
      row.dataset.status = status;
      row.dataset.id = String(todo.id ?? "");
      const mark = document.createElement("span");
      mark.className = "todo-mark";
      mark.textContent = MARKS[status] ?? "•";
      mark.title = LABELS[status] ?? status;
      const text = document.createElement("span");
      text.className = "todo-text";
      text.textContent = String(todo.content ?? "");
      const label = document.createElement("span");
      label.className = "todo-status";
      label.textContent = LABELS[status] ?? status;
      row.append(mark, text, label);
      return row;
    });
    this.list.replaceChildren(...rows);
    this.empty.hidden = rows.length > 0;
    const done = items.filter((t) => t.status === "completed").length;
    this.counts.textContent = rows.length ? `${done}/${rows.length} done` : "";
  }
}
