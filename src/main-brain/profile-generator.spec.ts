import { parseProfileDocument } from '../profiles/profile.schema';
import { closestTemplate, generateProfile, nameFrom } from './profile-generator';

describe('generateProfile (deterministic, keyword-picked template)', () => {
  it.each([
    ['Review pull requests for our payments service and flag risky diffs', 'code-reviewer'],
    ['Audit the repo for leaked secrets and vulnerable dependencies (CVE)', 'security-auditor'],
    ['Build React components with good accessibility and CSS', 'frontend-developer'],
    ['Keep the README and the changelog up to date', 'documentation-writer'],
    ['Maintain the CI pipeline, Docker images and Kubernetes deploy', 'devops-engineer'],
    ['Research and compare vector database options with sources', 'researcher'],
    ['Pair with me interactively, step by step', 'pair-programmer'],
    ['Fix the flaky bug in the billing API', 'coding-assistant'],
    ['Something entirely different', 'coding-assistant'],
  ])('%s → %s', (description, template) => {
    expect(closestTemplate(description).template.id).toBe(template);
  });

  it('matches whole words only ("ui" is not found in "squid" or "guild")', () => {
    expect(closestTemplate('the squid guild').matched).toEqual([]);
    // A later whole-word occurrence still counts after one inside a word; punctuation and ends of text are boundaries.
    expect(closestTemplate('squid ui').matched).toEqual(['ui']);
    expect(closestTemplate('(react)+css').matched).toEqual(['react', 'css']);
  });

  it('fills name, description and instructions; the result is a valid profile and the same every time', () => {
    const a = generateProfile('Review pull requests for the mobile app');
    expect(a).toEqual(generateProfile('Review pull requests for the mobile app'));
    expect(a.template_id).toBe('code-reviewer');
    expect(a.profile).toMatchObject({ name: 'Review pull requests for the mobile', description: 'Review pull requests for the mobile app' });
    expect((a.profile.instructions as { system_prompt: string }).system_prompt).toMatch(/purpose: Review pull requests for the mobile app$/);
    const { target_runtime, ...rest } = a.profile;
    expect(parseProfileDocument({ ...rest, runtime: target_runtime }).ok).toBe(true);
    expect(generateProfile('x', 'Named').profile.name).toBe('Named');
  });

  it('derives a name from the first words, stripping punctuation', () => {
    expect(nameFrom('  deploy: the "API" to k8s, nightly!  ')).toBe('Deploy the API to k8s nightly');
    expect(nameFrom('!!!')).toBe('Generated profile');
  });
});
