// Skills (the Skills extension, SEP-2640): list what a server offers, then load one skill, verified and gated.
import { MCPClientManager, type MCPServerConfigInput } from 'mcp-interlock/interop';
import { CapabilitySet } from 'mcp-interlock/security';

export async function main(server: MCPServerConfigInput) {
  const capabilities = new CapabilitySet();
  capabilities.grant(`mcp:${server.name}:skill:pdf-processing`, 'read'); // this skill's files; every other is denied

  await using manager = new MCPClientManager({ capabilities });
  await manager.connectServer(server);

  const skills = await manager.listSkills(server.name); // entries only: names, frontmatter, digests; no file read
  const pdf = skills.find((skill) => skill.name === 'pdf-processing');
  if (pdf === undefined) throw new Error(`${server.name} serves no pdf-processing skill`);

  const manifest = await manager.readSkill(server.name, pdf); // SKILL.md, checked against the listed digest
  const forms = await manager.readSkill(server.name, pdf, { file: 'references/FORMS.md' });
  const denied = await manager
    .readSkill(server.name, 'skill://secret-plans/SKILL.md')
    .catch((error: { code: string }) => error.code); // 'CAPABILITY_DENIED': nothing was sent

  return {
    skills: skills.map((skill) => skill.resource), // ['mcp:docs:skill:pdf-processing', ...]
    manifest: manifest.text,
    forms: forms.text,
    denied,
  };
}
