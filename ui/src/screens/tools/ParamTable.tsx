import type { ParamSpec } from "../../bindings";

/** A tool's parameters: name and description, type, required, default, allowed values. */
export function ParamTable({ params }: { params: ParamSpec[] }) {
  return (
    <table className="param-table">
      <thead>
        <tr>
          <th>Parameter</th>
          <th>Type</th>
          <th>Required</th>
          <th>Default</th>
          <th>Allowed values</th>
        </tr>
      </thead>
      <tbody>
        {params.map((p) => (
          <tr key={p.name}>
            <td>
              <code>{p.name}</code>
              {p.description && <div className="muted small">{p.description}</div>}
            </td>
            <td>{p.type}</td>
            <td>{(p.required ?? true) ? "yes" : "no"}</td>
            <td>
              {p.default === null || p.default === undefined ? "" : JSON.stringify(p.default)}
            </td>
            <td>{p.enum?.join(", ") ?? ""}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
