import { ProfileDoc } from '../profiles/profile.schema';
import { BUILTIN_TEMPLATES, BuiltinTemplate, DEFAULT_PROFILE_ID } from '../profiles/templates';

/**
 * Keywords that point at each built-in template. Deterministic on purpose (no model call): the same
 * description always picks the same template, and a reader can see why.
 */
const KEYWORDS: Readonly<Record<string, readonly string[]>> = {
  'coding-assistant': ['implement', 'feature', 'bug', 'fix', 'refactor', 'code', 'build', 'backend', 'api', 'test'],
  'code-reviewer': ['review', 'reviewer', 'reviews', 'pull request', 'pr', 'diff', 'code quality', 'maintainability'],
  researcher: ['research', 'investigate', 'compare', 'sources', 'evaluate', 'survey', 'find out', 'explore', 'library', 'options'],
  'security-auditor': ['security', 'vulnerability', 'vulnerabilities', 'cve', 'secrets', 'owasp', 'pentest', 'threat', 'exploit', 'dependency audit'],
  'frontend-developer': ['frontend', 'front-end', 'react', 'vue', 'svelte', 'angular', 'css', 'html', 'ui', 'component', 'components', 'accessibility', 'browser'],
  'documentation-writer': ['docs', 'documentation', 'readme', 'guide', 'guides', 'changelog', 'tutorial', 'api reference', 'writer'],
  'devops-engineer': ['devops', 'ci', 'cd', 'pipeline', 'deploy', 'deployment', 'docker', 'kubernetes', 'k8s', 'terraform', 'helm', 'infrastructure', 'infra'],
  'pair-programmer': ['pair', 'pairing', 'interactive', 'together', 'teach', 'mentor', 'step by step'],
};

export interface GeneratedProfile {
  template_id: string;
  matched_keywords: string[];
  /** The new profile's document in API names, ready for ProfilesService.create. */
  profile: Record<string, unknown>;
}

const isWordChar = (c: string | undefined): boolean => c !== undefined && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'));

/** Whether the keyword occurs in the (lowercased) text as a whole word: no letter or digit right before or after it. */
function hasWord(text: string, keyword: string): boolean {
  for (let at = text.indexOf(keyword); at >= 0; at = text.indexOf(keyword, at + 1)) {
    if (!isWordChar(text[at - 1]) && !isWordChar(text[at + keyword.length])) return true;
  }
  return false;
}

function hits(text: string, keywords: readonly string[]): string[] {
  return keywords.filter((k) => hasWord(text, k));
}

/** The template with the most keyword hits; ties go to the earlier template, no hit to the default one. */
export function closestTemplate(description: string): { template: BuiltinTemplate; matched: string[] } {
  const text = description.toLowerCase();
  let best: { template: BuiltinTemplate; matched: string[] } | null = null;
  for (const template of BUILTIN_TEMPLATES) {
    const matched = hits(text, KEYWORDS[template.id] ?? []);
    if (matched.length > 0 && (!best || matched.length > best.matched.length)) best = { template, matched };
  }
  return best ?? { template: BUILTIN_TEMPLATES.find((t) => t.id === DEFAULT_PROFILE_ID) ?? BUILTIN_TEMPLATES[0], matched: [] };
}

/** A display name from the description's first words when none is given: "Terraform pipeline helper". */
export function nameFrom(description: string): string {
  const words = description.replace(/[^\p{L}\p{N}\s-]/gu, ' ').split(/\s+/).filter(Boolean).slice(0, 6);
  const name = words.join(' ').slice(0, 60).trim() || 'Generated profile';
  return name.charAt(0).toUpperCase() + name.slice(1);
}

/** A new profile from a plain-language description: the closest template, with name, description and instructions filled. */
export function generateProfile(description: string, name?: string): GeneratedProfile {
  const purpose = description.trim();
  const { template, matched } = closestTemplate(purpose);
  const { runtime, ...doc }: ProfileDoc = template.doc;
  const base = doc.instructions.system_prompt ?? '';
  return {
    template_id: template.id,
    matched_keywords: matched,
    profile: {
      ...structuredClone(doc),
      name: name?.trim() || nameFrom(purpose),
      description: purpose.slice(0, 2000),
      target_runtime: runtime,
      instructions: { ...structuredClone(doc.instructions), system_prompt: `${base}\n\nThis profile's purpose: ${purpose}`.trim() },
    },
  };
}
